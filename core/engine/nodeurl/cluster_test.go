package nodeurl

import (
	"net/url"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withoutMarker removes liblock's cluster=yes from raw, for go-redis's
// ParseClusterURL (which knows no such option).
func withoutMarker(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	require.NoError(t, err)
	q := u.Query()
	q.Del("cluster")
	u.RawQuery = q.Encode()
	return u.String()
}

func TestClusterSameAsGoRedis(t *testing.T) {
	for _, raw := range []string{
		"redis://a:7000?cluster=yes",
		"redis://a:7000?cluster=yes&addr=b:7001&addr=c:7002",
		"redis://u:p@a?cluster=yes&addr=b:7001&client_name=x",
		"rediss://:p@a:7000?cluster=yes&addr=b:7001",
		"redis://?cluster=yes",
		"redis://a:7000?cluster=yes&dial_timeout=3&pool_size=5&max_redirects=3",
	} {
		o, err := redis.ParseClusterURL(withoutMarker(t, raw))
		require.NoError(t, err, raw)
		got, err := Parse(raw)
		require.NoError(t, err, raw)
		assert.True(t, got.Cluster, raw)
		assert.Equal(t, o.Addrs, got.Seeds, raw)
		assert.Equal(t, o.Addrs[0], got.Addr, raw)
		assert.Equal(t, o.Username, got.Username, raw)
		assert.Equal(t, o.Password, got.Password, raw)
		assert.Equal(t, o.ClientName, got.ClientName, raw)
		assert.Equal(t, o.TLSConfig != nil, got.TLS, raw)
		if o.TLSConfig != nil {
			assert.Equal(t, o.TLSConfig.ServerName, got.ServerName, raw)
		}
		assert.Zero(t, got.DB)
	}
}

func TestClusterRefusals(t *testing.T) {
	for raw, want := range map[string]string{
		"redis://a:7000?cluster=yes&master_name=m":       "redis: cluster: not with master_name",
		"redis://a:7000?master_name=m&cluster=yes":       "redis: cluster: not with master_name",
		"redis://a:7000/1?cluster=yes":                   `redis: cluster: db "1": a Redis Cluster has db 0 only`,
		"redis://a:7000?cluster=yes&db=2":                `redis: cluster: db "2"`,
		"redis://a:7000?cluster=no":                      `redis: cluster: must be yes (or true, 1)`,
		"redis://a:7000?cluster=":                        `redis: cluster: must be yes`,
		"redis://a:7000?cluster=yes&read_only=true":      "redis: read_only: a lock is a write",
		"redis://a:7000?cluster=yes&route_randomly=true": "redis: route_randomly:",
		"redis://a:7000?cluster=yes&addr=b":              "redis: unable to parse addr param: b",
		"redis://a:7000?cluster=yes&bogus=1":             "redis: unexpected option: bogus",
		"unix:///tmp/s?cluster=yes":                      "redis: invalid URL scheme: unix",
		"redis://:secret@a:7000?cluster=yes&db=2":        `redis: cluster: db "2"`,
	} {
		_, err := Parse(raw)
		require.Error(t, err, raw)
		assert.Contains(t, err.Error(), want, raw)
		assert.NotContains(t, err.Error(), "secret", raw)
	}
	// db 0, in the path or as db=, is what a Cluster has: accepted.
	for _, raw := range []string{"redis://a:7000/0?cluster=yes", "redis://a:7000?cluster=yes&db=0"} {
		_, err := Parse(raw)
		require.NoError(t, err, raw)
	}
	// A plain URL stays one standalone server.
	s, err := Parse("redis://a:7000?addr=b:7001")
	if err == nil {
		assert.False(t, s.Cluster)
	}
}
