package engine

// The read-write lock's scripts, by file (TestScriptSources,
// TestScriptHashes).
func init() {
	primitiveScripts["rw_acquire.lua"] = rwAcquireScript
	primitiveScripts["rw_extend.lua"] = rwExtendScript
	primitiveScripts["rw_release.lua"] = rwReleaseScript
	primitiveScripts["rw_fence.lua"] = rwFenceScript
	primitiveScripts["rw_inspect.lua"] = rwInspectScript
}
