// Linked into every benchmark of a build configured with -DRAGPP_BENCH_CHECK_ONLY=ON, as
// scripts/test.sh configures its Release build: the benchmarks are then compiled at -O0
// and linked, which checks that they still build at a fraction of the cost, and their
// figures would mean nothing, so they refuse to run.
#include <cstdio>
#include <cstdlib>

namespace {

struct RefuseToRun {
    RefuseToRun() {
        std::fputs("this benchmark was built at -O0 only to check that it compiles (RAGPP_BENCH_CHECK_ONLY=ON, "
                   "as scripts/test.sh configures build/release): its figures would mean nothing. Configure "
                   "again with `cmake --preset release` (or -DRAGPP_BENCH_CHECK_ONLY=OFF) and rebuild it.\n",
                   stderr);
        std::_Exit(2);
    }
};
const RefuseToRun refuse_to_run;

}  // namespace
