// A fake tree for ctest layers.checker: the core includes nlohmann_json.
#include <nlohmann/json.hpp>
