package bench

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/Shopify/toxiproxy/v2/collectors"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// The addresses of the veth pair between the bench's namespace (host side,
// where the proxy listens) and the workers' namespace.
const (
	netnsHostAddr   = "10.213.0.1"
	netnsWorkerAddr = "10.213.0.2"
)

// remote puts the worker processes on the far side of a network hop, as on
// other hosts: a Toxiproxy in the bench process forwards their connections
// to the database and delays every byte by the configured latency, and with
// a network namespace the workers also reach it only through a veth pair.
// (tc netem, the usual tool, is not available on every kernel; a proxy
// works everywhere and adds the delay in user space.)
type remote struct {
	proxy *toxiproxy.Proxy
	netns string
	// url is the database URL the workers use: the proxy's address.
	url string
}

// startRemote starts the proxy in front of dbURL's host with latency added
// to each direction's half of the round trip (so the round trip grows by
// latency), and, if netns is set, a namespace for the workers.
func startRemote(ctx context.Context, dbURL string, latency time.Duration, netns string) (*remote, error) {
	u, err := url.Parse(dbURL)
	if err != nil || u.Host == "" {
		return nil, usagef("--latency and --netns need a postgres:// URL with a host")
	}
	upstream := u.Host
	if u.Port() == "" {
		upstream = net.JoinHostPort(u.Hostname(), "5432")
	}
	r := &remote{netns: netns}
	listen := "127.0.0.1:0"
	if netns != "" {
		if err := r.makeNetns(ctx); err != nil {
			r.close()
			return nil, err
		}
		listen = netnsHostAddr + ":0"
	}
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	srv.Metrics.ProxyMetrics = collectors.NewProxyMetricCollectors()
	r.proxy = toxiproxy.NewProxy(srv, "drover-db", listen, upstream)
	if err := r.proxy.Start(); err != nil {
		r.close()
		return nil, fmt.Errorf("start proxy to %s: %w", upstream, err)
	}
	// Toxiproxy's latency has millisecond resolution; half each way keeps
	// the round trip exact for even milliseconds, and a whole millisecond
	// goes downstream.
	ms := latency.Milliseconds()
	for _, leg := range []struct {
		stream string
		ms     int64
	}{{"upstream", ms / 2}, {"downstream", ms - ms/2}} {
		if leg.ms == 0 {
			continue
		}
		spec := fmt.Sprintf(`{"name":"latency_%s","type":"latency","stream":%q,"toxicity":1,"attributes":{"latency":%d}}`,
			leg.stream, leg.stream, leg.ms)
		if _, err := r.proxy.Toxics.AddToxicJson(strings.NewReader(spec)); err != nil {
			r.close()
			return nil, fmt.Errorf("add latency to proxy: %w", err)
		}
	}
	wu := *u
	wu.Host = r.proxy.Listen
	r.url = wu.String()
	return r, nil
}

// wrap returns the command prefix that runs a worker process in the
// workers' namespace, or nothing.
func (r *remote) wrap() []string {
	if r == nil || r.netns == "" {
		return nil
	}
	return []string{"ip", "netns", "exec", r.netns}
}

// makeNetns creates the workers' namespace and a veth pair to it.
func (r *remote) makeNetns(ctx context.Context) error {
	host, peer := "drvh"+r.netns[len(r.netns)-6:], "drvw"+r.netns[len(r.netns)-6:]
	steps := [][]string{
		{"ip", "netns", "add", r.netns},
		{"ip", "link", "add", host, "type", "veth", "peer", "name", peer},
		{"ip", "link", "set", peer, "netns", r.netns},
		{"ip", "addr", "add", netnsHostAddr + "/30", "dev", host},
		{"ip", "link", "set", host, "up"},
		{"ip", "netns", "exec", r.netns, "ip", "addr", "add", netnsWorkerAddr + "/30", "dev", peer},
		{"ip", "netns", "exec", r.netns, "ip", "link", "set", peer, "up"},
		{"ip", "netns", "exec", r.netns, "ip", "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if out, err := exec.CommandContext(ctx, s[0], s[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("--netns: %s: %v: %s (creating namespaces needs root and iproute2)",
				strings.Join(s, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// close stops the proxy and removes the namespace (which takes the veth
// pair with it).
func (r *remote) close() {
	if r == nil {
		return
	}
	if r.proxy != nil {
		r.proxy.Stop()
	}
	if r.netns != "" {
		_ = exec.Command("ip", "netns", "del", r.netns).Run()
	}
}
