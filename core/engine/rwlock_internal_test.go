package engine

// rwScriptFiles: the read-write lock's scripts, by file (TestScriptSources).
var rwScriptFiles = map[string]*script{
	"rw_acquire.lua": rwAcquireScript, "rw_extend.lua": rwExtendScript, "rw_release.lua": rwReleaseScript,
	"rw_fence.lua": rwFenceScript, "rw_inspect.lua": rwInspectScript,
}
