// A fake tree for ctest layers.checker: this public header opens a detail namespace.
namespace ragpp::detail {}
