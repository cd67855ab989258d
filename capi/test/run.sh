#!/usr/bin/env bash
# The C test of liblock.so (make test-c). Builds capi/test/*.c but capi_report_test.c (main.c,
# helpers.c and one *_test.c file a topic) into one program with
# cc -Wall -Werror against build/liblock.h, then runs it against real
# redis-servers started by build/redisnodes:
#   1. 5 nodes, everything, including the 20,000-cycle leak test and, last,
#      SIGKILL of a minority;
#   2. 1 and 3 nodes, quick mode; capi/test/capi_report_test.c (what the library
#      tells a program: nothing on stderr, the report stream) on 3 nodes;
#   3. 3 nodes, quick mode, the test built with -fsanitize=address (ASan on
#      the C side + LeakSanitizer at exit: catches a leaked, double-freed or
#      overrun string crossing the boundary);
#   4. 3 nodes, quick mode, under valgrind memcheck with the Go runtime
#      suppressions in valgrind.supp (skipped with a notice if valgrind is
#      missing; LIBLOCK_NO_VALGRIND=1 skips it too).
set -euo pipefail
cd "$(dirname "$0")/../.."
B=build
[ -f $B/liblock.so ] && [ -f $B/liblock.h ] && [ -x $B/redisnodes ] || { echo "run make build first" >&2; exit 1; }
CC=${CC:-cc}
# The one program's sources: every capi/test/*.c but capi_report_test.c, a program of its own.
srcs=()
for f in capi/test/*.c; do [ "$f" = capi/test/capi_report_test.c ] || srcs+=("$f"); done
build_test() { # output, extra flags
	local out=$1; shift
	$CC -Wall -Werror -O1 -g "$@" -I$B -o "$out" "${srcs[@]}" -L$B -llock -Wl,-rpath,"$PWD/$B" -lpthread
}
build_test $B/capi_test
# What the library tells a program (nothing on stderr; the report stream): its own program.
$CC -Wall -Werror -O1 -g -I$B -o $B/capi_report_test capi/test/capi_report_test.c -L$B -llock -Wl,-rpath,"$PWD/$B" -lpthread
asan=0
if build_test $B/capi_test_asan -fsanitize=address 2>/dev/null; then asan=1; fi

run() { # name, then the command
	local name=$1; shift
	echo "== capi test: $name"
	local out; out=$(mktemp)
	if ! "$@" 2>&1 | tee "$out"; then
		echo "capi test: $name FAILED" >&2; rm -f "$out"; exit 1
	fi
	grep -Eq '^[0-9]+ passed, 0 failed$' "$out" || { echo "capi test: $name: no clean summary" >&2; rm -f "$out"; exit 1; }
	rm -f "$out"
}

start=$(date +%s)
run "5 nodes, full" env LIBLOCK_TEST_KILL=1 $B/redisnodes -n 5 -- $B/capi_test
run "1 node, quick" env LIBLOCK_TEST_QUICK=1 $B/redisnodes -n 1 -- $B/capi_test
run "3 nodes, reports and stderr" $B/redisnodes -n 3 -- $B/capi_report_test
if [ $asan = 1 ]; then
	run "3 nodes, quick, ASan+LSan" env LIBLOCK_TEST_QUICK=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		$B/redisnodes -n 3 -- $B/capi_test_asan
else
	echo "== capi test: this compiler cannot build with -fsanitize=address; running without"
	run "3 nodes, quick" env LIBLOCK_TEST_QUICK=1 $B/redisnodes -n 3 -- $B/capi_test
fi
if [ "${LIBLOCK_NO_VALGRIND:-}" = 1 ]; then
	echo "== capi test: valgrind skipped (LIBLOCK_NO_VALGRIND=1)"
elif command -v valgrind >/dev/null; then
	# Under valgrind everything is ~10x slower: a larger node timeout keeps
	# the timing bounds meaningful.
	run "3 nodes, quick, valgrind memcheck" env LIBLOCK_TEST_QUICK=1 LIBLOCK_TEST_TIMEOUT=1000 \
		$B/redisnodes -n 3 -- valgrind --quiet --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,possible --num-callers=30 \
		--suppressions=capi/test/valgrind.supp $B/capi_test
else
	echo "== capi test: valgrind not installed, memcheck run skipped (apt-get install valgrind)"
fi
echo "capi tests passed in $(( $(date +%s) - start )) s"
