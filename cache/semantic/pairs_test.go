package semantic

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pair is one line of testdata/pairs.jsonl.
type pair struct {
	ID    int    `json:"id"`
	Label string `json:"label"` // paraphrase, hard (same topic, another answer) or unrelated
	Topic string `json:"topic"`
	A     string `json:"a"`
	B     string `json:"b"`
}

func (p pair) paraphrase() bool { return p.Label == "paraphrase" }

// labelledSet is testdata: the pairs and the vector of each of their texts.
type labelledSet struct {
	pairs   []pair
	model   string
	dims    int
	vectors map[string][]float32
}

func loadLabelledSet(t testing.TB) labelledSet {
	t.Helper()
	f, err := os.Open("testdata/pairs.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var set labelledSet
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var p pair
		require.NoError(t, json.Unmarshal(sc.Bytes(), &p), "line %q", sc.Text())
		set.pairs = append(set.pairs, p)
	}
	require.NoError(t, sc.Err())

	raw, err := os.ReadFile("testdata/embeddings.json")
	require.NoError(t, err)
	var file struct {
		Model    string            `json:"model"`
		Dims     int               `json:"dims"`
		Encoding string            `json:"encoding"`
		Vectors  map[string]string `json:"vectors"`
	}
	require.NoError(t, json.Unmarshal(raw, &file))
	require.Equal(t, "base64 of little-endian float32", file.Encoding)
	set.model, set.dims = file.Model, file.Dims
	set.vectors = make(map[string][]float32, len(file.Vectors))
	for text, b64 := range file.Vectors {
		b, err := base64.StdEncoding.DecodeString(b64)
		require.NoError(t, err, "vector of %q", text)
		require.Zero(t, len(b)%4, "vector of %q", text)
		v := make([]float32, len(b)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		set.vectors[text] = v
	}
	return set
}

func TestLabelledSetShape(t *testing.T) {
	set := loadLabelledSet(t)
	require.Len(t, set.pairs, 200)
	labels := map[string]int{}
	for i, p := range set.pairs {
		require.Equal(t, i+1, p.ID, "ids run from 1")
		require.NotEmpty(t, p.Topic, "pair %d", p.ID)
		require.NotEqual(t, p.A, p.B, "pair %d", p.ID)
		labels[p.Label]++
		for _, text := range []string{p.A, p.B} {
			v, ok := set.vectors[text]
			require.True(t, ok, "no vector for %q", text)
			require.Len(t, v, set.dims, "vector of %q", text)
			_, ok = invNorm(v)
			require.True(t, ok, "vector of %q has no direction", text)
		}
	}
	require.Equal(t, 100, labels["paraphrase"])
	require.Equal(t, 100, labels["hard"]+labels["unrelated"])
	require.Greater(t, labels["hard"], 80, "most negatives are hard")
	require.Len(t, labels, 3, "labels: %v", labels)
	require.Equal(t, 512, set.dims)
	require.NotEmpty(t, set.model)
}

// rates are the shares of the set's pairs whose second prompt, looked up in an index holding
// the first alone, is answered at threshold.
type rates struct{ falseHits, trueHits float64 }

// measure looks every pair up through an Index: each pair's first prompt in a partition of its
// own, the second as the query.
func measure(t testing.TB, set labelledSet, thresholds []float32) []rates {
	ix := New(Options{})
	for _, p := range set.pairs {
		id := strconv.Itoa(p.ID) // a prompt can open several pairs: keyed by pair
		ix.Add(id, id, set.vectors[p.A], time.Time{})
	}
	now := time.Now()
	out := make([]rates, len(thresholds))
	for _, p := range set.pairs {
		m, ok := ix.Nearest(strconv.Itoa(p.ID), set.vectors[p.B], now)
		if !ok || m.Key != strconv.Itoa(p.ID) {
			t.Fatalf("pair %d: the lookup answered %+v, %v", p.ID, m, ok)
		}
		for i, th := range thresholds {
			switch {
			case !m.Hit(th):
			case p.paraphrase():
				out[i].trueHits++
			default:
				out[i].falseHits++
			}
		}
	}
	for i := range out {
		out[i].falseHits /= 100
		out[i].trueHits /= 100
	}
	return out
}

// reportedThresholds are the thresholds whose rates TestFalseHitRate logs and
// BenchmarkFalseHitRate reports.
var reportedThresholds = []float32{0.7, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, DefaultThreshold, 0.998}

func TestFalseHitRate(t *testing.T) {
	set := loadLabelledSet(t)
	got := measure(t, set, reportedThresholds)
	t.Logf("embeddings: %s, %d dimensions", set.model, set.dims)
	for i, th := range reportedThresholds {
		t.Logf("threshold %.3f: false hits %3.0f%%, true hits %3.0f%%", th, 100*got[i].falseHits, 100*got[i].trueHits)
	}

	def := measure(t, set, []float32{DefaultThreshold})[0]
	require.LessOrEqual(t, def.falseHits, 0.02, "DefaultThreshold no longer keeps false hits at 2%% or less on the set: fit it again")

	// The lookups agree with the similarities computed apart from the index.
	for i, th := range reportedThresholds {
		var want rates
		for _, p := range set.pairs {
			if cosine(set.vectors[p.A], set.vectors[p.B]) < float64(th) {
				continue
			}
			if p.paraphrase() {
				want.trueHits += 0.01
			} else {
				want.falseHits += 0.01
			}
		}
		require.InDelta(t, want.falseHits, got[i].falseHits, 0.011, "threshold %v", th)
		require.InDelta(t, want.trueHits, got[i].trueHits, 0.011, "threshold %v", th)
	}
}

// TestIndexOnTheLabelledSet stores the first prompt of every pair in one partition, as a
// workspace's cache would hold them, and looks up the second prompts.
func TestIndexOnTheLabelledSet(t *testing.T) {
	set := loadLabelledSet(t)
	ix := New(Options{})
	for _, p := range set.pairs {
		ix.Add("p", p.A, set.vectors[p.A], time.Time{})
	}
	now := time.Now()

	t.Run("a prompt asked again verbatim hits", func(t *testing.T) {
		for _, p := range set.pairs {
			m, ok := ix.Nearest("p", set.vectors[p.A], now)
			require.True(t, ok)
			require.Equal(t, p.A, m.Key)
			require.True(t, m.Hit(DefaultThreshold), "%q scored %v against itself", p.A, m.Score)
		}
	})

	t.Run("a paraphrase finds the prompt it rewords", func(t *testing.T) {
		found := 0
		for _, p := range set.pairs {
			if !p.paraphrase() {
				continue
			}
			m, ok := ix.Nearest("p", set.vectors[p.B], now)
			require.True(t, ok)
			if m.Key == p.A {
				found++
				require.InDelta(t, cosine(set.vectors[p.A], set.vectors[p.B]), m.Score, 1e-5)
			}
		}
		t.Logf("%d of 100 paraphrases have the prompt they reword as nearest, among %d prompts", found, ix.Len())
		require.GreaterOrEqual(t, found, 85)
	})

	t.Run("an unrelated prompt is refused", func(t *testing.T) {
		for _, p := range set.pairs {
			if p.Label != "unrelated" {
				continue
			}
			solo := New(Options{})
			solo.Add("p", p.A, set.vectors[p.A], time.Time{})
			m, ok := solo.Nearest("p", set.vectors[p.B], now)
			require.True(t, ok)
			require.False(t, m.Hit(DefaultThreshold), "%q answered %q at %v", p.B, p.A, m.Score)
			require.Less(t, m.Score, float32(0.5), "%q against %q", p.B, p.A)
		}
	})

	t.Run("the int8 first pass answers as the exact scan", func(t *testing.T) {
		if !quantised {
			t.Skip("scans on this processor take no int8 pass")
		}
		big := New(Options{})
		for text, v := range set.vectors {
			big.Add("p", text, v, time.Time{})
		}
		s := big.shard("p").slabs[slabKey{"p", set.dims}]
		for _, text := range slices.Sorted(maps.Keys(set.vectors)) {
			q := set.vectors[text]
			// Each text's own row taken out of the race, so that the nearest is another one.
			at := big.keys[text]
			saved := s.expires[at.slot]
			s.expires[at.slot] = 0
			inv, _ := invNorm(q)
			wantSlot, wantDot := s.scanExact(q, now.UnixNano())
			gotSlot, gotDot := s.scanQuantised(q, inv, now.UnixNano())
			s.expires[at.slot] = saved
			require.Equal(t, wantSlot, gotSlot, "%q", text)
			require.Equal(t, wantDot, gotDot, "%q", text)
		}
	})
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

// BenchmarkFalseHitRate reports, for the labelled set of testdata/pairs.jsonl, the share of
// pairs that are not paraphrases answered at each threshold (false-hit-%) and the share of
// paraphrases answered (true-hit-%). An op is the lookup of the 200 pairs.
func BenchmarkFalseHitRate(b *testing.B) {
	set := loadLabelledSet(b)
	for _, th := range reportedThresholds {
		name := fmt.Sprintf("threshold=%.3f", th)
		if th == DefaultThreshold {
			name += "-default"
		}
		b.Run(name, func(b *testing.B) {
			var r rates
			for b.Loop() {
				r = measure(b, set, []float32{th})[0]
			}
			b.ReportMetric(100*r.falseHits, "false-hit-%")
			b.ReportMetric(100*r.trueHits, "true-hit-%")
		})
	}
}
