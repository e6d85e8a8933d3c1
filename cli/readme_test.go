package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadmeCommandLinesParse holds the README's "Command line" section to the CLI: every
// `causeway ...` in its sh blocks names a command that exists, with flags it takes and the
// arguments it expects, and every command the section's list names exists. (What the
// commands do against a real server is TestCLIScenario's, in cmd/causeway.)
func TestReadmeCommandLinesParse(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	md := string(raw)
	start := strings.Index(md, "\n## Command line\n")
	require.GreaterOrEqual(t, start, 0, "the README has a Command line section")
	section := md[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}

	blocks := regexp.MustCompile("(?s)```sh\n(.*?)\n```").FindAllStringSubmatch(section, -1)
	require.NotEmpty(t, blocks)
	invocation := regexp.MustCompile(`(?:^|[\s(])causeway\s+([^|)]*)`)
	checked := 0
	for _, b := range blocks {
		for _, line := range strings.Split(strings.ReplaceAll(b[1], "\\\n", " "), "\n") {
			for _, m := range invocation.FindAllStringSubmatch(line, -1) {
				words, err := shellWords(m[1])
				require.NoError(t, err, line)
				if len(words) == 0 || !Has(words[0]) {
					continue
				}
				root := (&app{}).root()
				cmd, rest, err := root.Find(words)
				require.NoError(t, err, line)
				assert.False(t, cmd.HasSubCommands(), "%q names a group, not a command", line)
				require.NoError(t, cmd.ParseFlags(rest), line)
				require.NoError(t, cmd.ValidateArgs(cmd.Flags().Args()), line)
				checked++
			}
		}
	}
	assert.GreaterOrEqual(t, checked, 10, "the examples were found")

	for _, c := range (&app{}).root().Commands() {
		if c.Name() != "help" {
			assert.Contains(t, section, "`"+c.Name(), "the section names the %s command", c.Name())
		}
	}
}

// shellWords splits a command line as sh does for what the README writes: words separated by
// spaces, quoted with ' or " (no escapes inside), $VAR left as it is.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case '\'', '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, os.ErrInvalid
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
