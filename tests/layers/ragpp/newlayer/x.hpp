// A fake tree for ctest layers.checker: a folder without a row in the table.
#include <ragpp/core/types.hpp>
