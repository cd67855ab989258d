package hostabi

import (
	"strconv"
	"testing"

	"github.com/liblock/liblock/core/testkit/hostabitest"
	"github.com/stretchr/testify/require"
)

// BenchmarkStepCPU is wasm/host's BenchmarkModuleCPU without the module:
// an acquire+release pair through the Adapter and Step, natively, with a
// host that answers every command at once as for a free key. What Step
// allocates here it allocates in liblock.wasm too, where an allocation
// costs far more.
func BenchmarkStepCPU(b *testing.B) {
	for _, n := range []int{1, 5} {
		b.Run("nodes="+strconv.Itoa(n), func(b *testing.B) {
			js := `{"nodes":[`
			for i := range n {
				if i > 0 {
					js += ","
				}
				js += `"redis://127.0.0.1:` + strconv.Itoa(1+i) + `"`
			}
			h, err := New(js + `],"node_timeout_ms":1000}`)
			require.NoError(b, err)
			defer Free(h)
			a := NewAdapter(Handle(h), n)
			host := &hostabitest.Instant{E: a}
			pair := func() {
				if _, err := host.Pair("bench"); err != nil {
					b.Fatal(err)
				}
			}
			for range 200 {
				pair()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				pair()
			}
		})
	}
}
