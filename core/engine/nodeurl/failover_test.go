package nodeurl

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goRedisFailover is the reference: go-redis's ParseFailoverURL, read into
// a Spec.
func goRedisFailover(raw string) (Spec, error) {
	o, err := redis.ParseFailoverURL(raw)
	if err != nil {
		return Spec{}, err
	}
	s := Spec{
		Network: "tcp", Addr: o.SentinelAddrs[0], Username: o.Username, Password: o.Password, DB: o.DB,
		ClientName: o.ClientName, MasterName: o.MasterName, Sentinels: o.SentinelAddrs,
		SentinelUsername: o.SentinelUsername, SentinelPassword: o.SentinelPassword,
	}
	if o.TLSConfig != nil {
		s.TLS, s.ServerName, s.SkipVerify = true, o.TLSConfig.ServerName, o.TLSConfig.InsecureSkipVerify
	}
	return s, nil
}

// liblockRefusals start the messages of what liblock refuses and go-redis
// accepts.
var liblockRefusals = []string{"redis: master_name: ", "redis: replica_only: ", "redis: route_by_latency: ", "redis: route_randomly: "}

// liblockRefused: err is one of liblock's own refusals.
func liblockRefused(err error) bool {
	for _, p := range liblockRefusals {
		if strings.HasPrefix(err.Error(), p) {
			return true
		}
	}
	return false
}

// sameAsGoRedisFailover checks Parse against redis.ParseFailoverURL: both
// accept raw and read the same Spec, or both refuse it with the same
// message (scrubbed), or liblock refuses with one of its own.
func sameAsGoRedisFailover(t *testing.T, raw string) {
	t.Helper()
	want, wantErr := goRedisFailover(raw)
	got, err := Parse(raw)
	if wantErr != nil {
		require.Errorf(t, err, "%q: go-redis refuses it (%v), Parse accepts it: %+v", raw, wantErr, got)
		assert.Equalf(t, scrub(wantErr.Error(), raw), err.Error(), "%q", raw)
		return
	}
	if badPortIn(want) {
		// Refused for the port, or for a fault of liblock's own that the
		// URL also has (redis://:70000?master_name: an empty master_name).
		require.Errorf(t, err, "%q: a port outside 1-65535, Parse accepts it: %+v", raw, got)
		if !liblockRefused(err) {
			assert.Containsf(t, err.Error(), "redis: invalid port ", "%q", raw)
		}
		return
	}
	if err != nil && liblockRefused(err) {
		return
	}
	require.NoErrorf(t, err, "%q: go-redis accepts it: %+v", raw, want)
	assert.Equalf(t, want, got, "%q", raw)
}

var failoverCorpus = []string{
	"redis://s1:26379?master_name=mymaster",
	"redis://s1?master_name=mymaster",
	"redis://?master_name=m",
	"redis://su:spw@s1:26379/3?master_name=m&addr=s2:26380&addr=s3:26381&username=du&password=dpw&client_name=c",
	"redis://:spw@s1:26379?master_name=m&password=dpw",
	"rediss://s1:26379?master_name=m&skip_verify=true",
	"rediss://s1:26379?master_name=m&addr=[::1]:26379",
	"redis://[::1]:26379?master_name=m&db=2",
	"redis://s1:26379?master_name=m&dial_timeout=3&read_timeout=1s&pool_size=4&max_retries=1",
	"redis://s1:26379?master_name=m&use_disconnected_replicas=true&dialer_retries=2",
	"redis://s1:26379?master_name=m&route_by_latency=false&route_randomly=0&replica_only=false",
	"redis://s1:26379?master_name=m&addr=127.0.0.1%3A1",
	// refused by go-redis
	"redis://s1:26379?master_name=m&addr=s2",
	"redis://s1:26379?master_name=m&addr=:26379",
	"redis://s1:26379?master_name=m&addr=s2:",
	"redis://s1:26379?master_name=m&addr=a:b:c",
	"redis://s1:26379?master_name=m&addr=[::1",
	"redis://s1:26379?master_name=m&addr=[a]b:1",
	"redis://s1:26379?master_name=m&addr=a]:1",
	"redis://s1:26379/x?master_name=m",
	"redis://s1:26379/1/2?master_name=m",
	"redis://s1:26379?master_name=m&db=x",
	"redis://s1:26379?master_name=m&pool_size=x",
	"redis://s1:26379?master_name=m&bogus=1&other=2",
	"redis://s1:26379?master_name=m&skip_verify=true",
	"rediss://s1:26379?master_name=m&skip_verify=maybe",
	"unix:///tmp/s.sock?master_name=m",
	"http://s1?master_name=m",
	"redis://u:secret@s1:26379?master_name=m&db=secret",
}

// Every failover URL go-redis reads, Parse reads the same way; every one it
// refuses, Parse refuses with its message (FuzzParse goes on from these).
func TestFailoverSameAsGoRedis(t *testing.T) {
	for _, raw := range failoverCorpus {
		sameAsGoRedisFailover(t, raw)
		noPasswordIn(t, raw)
	}
}

func FuzzFailover(f *testing.F) {
	for _, raw := range failoverCorpus {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if IsFailover(raw) {
			sameAsGoRedisFailover(t, raw)
			noPasswordIn(t, raw)
		}
	})
}

// liblock's own refusals: each names the parameter.
func TestFailoverRefusals(t *testing.T) {
	for raw, param := range map[string]string{
		"redis://s1:26379?master_name=":                           "master_name",
		"redis://s1:26379?master_name=m&replica_only=true":        "replica_only",
		"redis://s1:26379?master_name=m&route_by_latency=true":    "route_by_latency",
		"redis://s1:26379?master_name=m&route_randomly=1":         "route_randomly",
		"redis://s1:26379?master_name=m&addr=nope":                "addr",
		"redis://s1:26379?master_name=m&db=x":                     "database number",
		"redis://s1:26379?master_name=m&sentinel_password=x":      "sentinel_password",
		"redis://s1:26379?master_name=m&dial_timeout=soon":        "dial_timeout",
		"redis://user:secret@s1:26379?master_name=m&addr=b:c:d:e": "addr",
	} {
		_, err := Parse(raw)
		require.Errorf(t, err, "%q", raw)
		assert.Containsf(t, err.Error(), param, "%q", raw)
		assert.NotContainsf(t, err.Error(), "secret", "%q", raw)
	}
	// A plain URL with addr= but no master_name is go-redis's plain URL:
	// addr is an unexpected option.
	_, err := Parse("redis://h:1?addr=s2:2")
	require.Error(t, err)
	assert.Equal(t, "redis: unexpected option: addr", err.Error())
}

func TestIsFailover(t *testing.T) {
	assert.True(t, IsFailover("redis://s?master_name=m"))
	assert.False(t, IsFailover("redis://s?db=1"))
	assert.False(t, IsFailover("%zz"))
	assert.True(t, strings.HasPrefix(Redact("redis://u:pw@s?master_name=m"), "redis://u:xxxxx@"))
	assert.Equal(t, "redis://u:xxxxx@s?master_name=m&password=xxxxx&pass%77ord=xxxxx&db=1#password=x",
		Redact("redis://u:spw@s?master_name=m&password=dpw&pass%77ord=d2&db=1#password=x"))
	assert.Equal(t, "redis://s?master_name=m", Redact("redis://s?master_name=m"))
}
