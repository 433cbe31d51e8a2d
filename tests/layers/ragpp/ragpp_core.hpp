// A fake tree for ctest layers.checker: the core umbrella.
#include <ragpp/newlayer/x.hpp>
