package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/causeway/causeway/cluster"
	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/eventstore"
)

// Instances and the applied-version watermark (server mode). GET /instances lists the live
// instances of the deployment with the event position each has applied and how far behind the
// most advanced it is. A write that sends WaitHeader: all-instances is answered only once every
// live instance has applied it, within WaitTimeoutHeader milliseconds (default 5000, at most
// 30000); past that it is answered 504, naming the instances still behind. The change is saved
// either way.

const (
	// WaitHeader asks a write to wait until every live instance has applied it.
	WaitHeader = "x-gateway-wait-for"
	// WaitTimeoutHeader bounds that wait, in milliseconds.
	WaitTimeoutHeader = "x-gateway-wait-timeout"
	// waitAll is WaitHeader's one value.
	waitAll = "all-instances"

	defaultInstancesWait = 5 * time.Second
	maxInstancesWait     = 30 * time.Second
)

type instancesAnswer struct {
	Object string             `json:"object"`
	Total  int                `json:"total"`
	Data   []cluster.Instance `json:"data"`
}

func (a *Admin) registerInstances(r *mux.Router) {
	r.Handle("/instances", a.route("instance", func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		if err := requireOrgSettingsReader(actorFrom(r.Context()), "organisations.read"); err != nil {
			return 0, nil, err
		}
		if a.Instances == nil {
			return 0, nil, domain.Errorf(domain.CodeUnsupported,
				"instances are listed in server mode only (DATABASE_URL): embedded, this process is the only one")
		}
		list, err := a.Instances.List(r.Context(), cluster.Alive)
		if err != nil {
			return 0, nil, &domain.Error{Code: domain.CodeUnavailable, Err: err, Message: "the instances could not be read"}
		}
		list = cluster.Lag(list)
		if list == nil {
			list = []cluster.Instance{}
		}
		return http.StatusOK, instancesAnswer{Object: "list", Total: len(list), Data: list}, nil
	})).Methods(http.MethodGet)
}

// instancesWait reads WaitHeader and WaitTimeoutHeader: 0 when the write asks for no wait.
func instancesWait(r *http.Request) (time.Duration, error) {
	v := strings.TrimSpace(r.Header.Get(WaitHeader))
	if v == "" {
		return 0, nil
	}
	if v != waitAll {
		return 0, domain.Invalid(WaitHeader, WaitHeader+" takes one value: "+waitAll)
	}
	raw := strings.TrimSpace(r.Header.Get(WaitTimeoutHeader))
	if raw == "" {
		return defaultInstancesWait, nil
	}
	ms, err := strconv.Atoi(raw)
	if err != nil || ms < 1 || time.Duration(ms)*time.Millisecond > maxInstancesWait {
		return 0, domain.Invalid(WaitTimeoutHeader, WaitTimeoutHeader+" must be a whole number of milliseconds from 1 to 30000")
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// waitForInstances holds a write's answer until every live instance has applied pos, when the
// request asks for it.
func (a *Admin) waitForInstances(r *http.Request, pos eventstore.Position, wait time.Duration) error {
	if wait == 0 {
		return nil
	}
	if a.Instances == nil {
		return nil // embedded: this process is the only instance, and it has applied the write
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	err := cluster.WaitApplied(ctx, a.Instances, uint64(pos))
	var behind *cluster.BehindError
	if errors.As(err, &behind) {
		return &domain.Error{Code: domain.CodeGatewayTimeout, Err: err, Message: "the change was saved (position " +
			strconv.FormatUint(uint64(pos), 10) + ") but " + behind.Error() + " within " + wait.String()}
	}
	if err != nil {
		return &domain.Error{Code: domain.CodeUnavailable, Err: err, Message: "the change was saved, but the instances could not be read"}
	}
	return nil
}

// ifMatch reads If-Match: the stream revision a write was decided on, as the ETag of a read
// gave it ("7", W/"7" or 7); nil when absent.
func ifMatch(r *http.Request) (*uint64, error) {
	raw := strings.TrimSpace(r.Header.Get("If-Match"))
	if raw == "" {
		return nil, nil
	}
	v := strings.Trim(strings.TrimPrefix(raw, "W/"), `"`)
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return nil, domain.Invalid("If-Match", `If-Match must be an ETag this API answered, such as "7"`)
	}
	return &n, nil
}

// etag answers a resource's ETag: the revision of its stream (prefix, id), which a write may
// send back as If-Match to be refused (412) if the resource has moved since. A read that cannot
// tell the revision answers without one.
func (a *Admin) etag(w http.ResponseWriter, r *http.Request, prefix, id string) {
	rev, ok, err := a.Commands.Revision(r.Context(), domain.Stream(prefix, id))
	if err == nil && ok {
		w.Header().Set("ETag", `"`+strconv.FormatUint(rev, 10)+`"`)
	}
}
