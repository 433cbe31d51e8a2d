// A fake tree for ctest layers.checker.
