// ragpp: Filter, a boolean expression over document metadata (semantics and text syntax: filter/filter.hpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>

namespace ragpp {

/// A value a filter compares with: a string, a number or a date.
using FilterValue = std::variant<std::string, double, Date>;

class Filter {
public:
    enum class Kind { all, none, eq, in, range, exists, and_, or_, not_ };

    /// Every document.
    Filter() = default;
    [[nodiscard]] static Filter all() { return Filter(); }
    [[nodiscard]] static Filter none() { return Filter(Kind::none); }

    [[nodiscard]] static Filter eq(std::string field, FilterValue value) {
        check_value(value, "Filter::eq");
        Filter f(Kind::eq);
        f.field_ = std::move(field);
        f.values_.push_back(std::move(value));
        return f;
    }
    [[nodiscard]] static Filter in(std::string field, std::vector<FilterValue> values) {
        for (const auto& v : values) check_value(v, "Filter::in");
        Filter f(Kind::in);
        f.field_ = std::move(field);
        f.values_ = std::move(values);
        return f;
    }
    /// Numbers or dates within [lo, hi] (each bound optional, inclusive unless said).
    /// Throws InvalidArgument when a bound is a string, is NaN, or when the bounds
    /// have different types or both are missing.
    [[nodiscard]] static Filter range(std::string field, std::optional<FilterValue> lo, std::optional<FilterValue> hi,
                                      bool lo_inclusive = true, bool hi_inclusive = true) {
        if (!lo && !hi) throw InvalidArgument("Filter::range on '" + field + "': no bound");
        for (const auto* b : {&lo, &hi}) {
            if (!*b) continue;
            if (std::holds_alternative<std::string>(**b))
                throw InvalidArgument("Filter::range on '" + field + "': bounds must be numbers or dates");
            check_value(**b, "Filter::range");
        }
        if (lo && hi && lo->index() != hi->index())
            throw InvalidArgument("Filter::range on '" + field + "': one bound is a number, the other a date");
        Filter f(Kind::range);
        f.field_ = std::move(field);
        f.lo_ = std::move(lo);
        f.hi_ = std::move(hi);
        f.lo_inclusive_ = lo_inclusive;
        f.hi_inclusive_ = hi_inclusive;
        return f;
    }
    [[nodiscard]] static Filter exists(std::string field) {
        Filter f(Kind::exists);
        f.field_ = std::move(field);
        return f;
    }

    friend Filter operator&&(Filter a, Filter b) { return combine(Kind::and_, std::move(a), std::move(b)); }
    friend Filter operator||(Filter a, Filter b) { return combine(Kind::or_, std::move(a), std::move(b)); }
    friend Filter operator!(Filter a) {
        Filter f(Kind::not_);
        f.children_.push_back(std::move(a));
        return f;
    }

    [[nodiscard]] Kind kind() const noexcept { return kind_; }
    [[nodiscard]] const std::string& field() const noexcept { return field_; }
    [[nodiscard]] const std::vector<FilterValue>& values() const noexcept { return values_; }
    [[nodiscard]] const std::optional<FilterValue>& lower() const noexcept { return lo_; }
    [[nodiscard]] const std::optional<FilterValue>& upper() const noexcept { return hi_; }
    [[nodiscard]] bool lower_inclusive() const noexcept { return lo_inclusive_; }
    [[nodiscard]] bool upper_inclusive() const noexcept { return hi_inclusive_; }
    [[nodiscard]] const std::vector<Filter>& children() const noexcept { return children_; }

    /// Whether a document with this metadata passes: the reference semantics.
    [[nodiscard]] bool matches(const Metadata& m) const {
        switch (kind_) {
            case Kind::all: return true;
            case Kind::none: return false;
            case Kind::exists: return m.find(field_) != m.end();
            case Kind::eq:
            case Kind::in: {
                auto it = m.find(field_);
                if (it == m.end()) return false;
                for (const auto& v : values_)
                    if (value_matches(it->second, v)) return true;
                return false;
            }
            case Kind::range: {
                auto it = m.find(field_);
                return it != m.end() && in_range(it->second);
            }
            case Kind::and_:
                for (const auto& c : children_)
                    if (!c.matches(m)) return false;
                return true;
            case Kind::or_:
                for (const auto& c : children_)
                    if (c.matches(m)) return true;
                return false;
            case Kind::not_: return !children_.front().matches(m);
        }
        return false;
    }

    /// Whether `v` is within the bounds (for range filters).
    [[nodiscard]] bool in_range(const MetaValue& v) const {
        const FilterValue& any = lo_ ? *lo_ : *hi_;
        if (std::holds_alternative<double>(any)) {
            const auto* x = std::get_if<double>(&v);
            return x && bounds_ok(*x, lo_ ? std::get<double>(*lo_) : 0.0, hi_ ? std::get<double>(*hi_) : 0.0);
        }
        const auto* d = std::get_if<Date>(&v);
        return d && bounds_ok(d->days, lo_ ? std::get<Date>(*lo_).days : 0, hi_ ? std::get<Date>(*hi_).days : 0);
    }

    /// A text form in the parse_filter syntax (parse_filter(f.to_string()) == f).
    [[nodiscard]] std::string to_string() const {
        switch (kind_) {
            case Kind::all: return "all";
            case Kind::none: return "none";
            case Kind::exists: return "exists(" + field_ + ")";
            case Kind::eq: return field_ + "=" + value_text(values_.front());
            case Kind::in: {
                std::string s = field_ + " in (";
                for (std::size_t i = 0; i < values_.size(); ++i) s += (i ? ", " : "") + value_text(values_[i]);
                return s + ")";
            }
            case Kind::range: {
                std::string s;
                if (lo_) s += field_ + (lo_inclusive_ ? ">=" : ">") + value_text(*lo_);
                if (lo_ && hi_) s += " && ";
                if (hi_) s += field_ + (hi_inclusive_ ? "<=" : "<") + value_text(*hi_);
                return lo_ && hi_ ? "(" + s + ")" : s;
            }
            case Kind::and_:
            case Kind::or_: {
                std::string s = "(";
                for (std::size_t i = 0; i < children_.size(); ++i)
                    s += (i ? (kind_ == Kind::and_ ? " && " : " || ") : "") + children_[i].to_string();
                return s + ")";
            }
            case Kind::not_: return "!" + children_.front().to_string();
        }
        return {};
    }
    friend bool operator==(const Filter& a, const Filter& b) { return a.to_string() == b.to_string(); }

    /// eq(f, v) on one metadata value.
    [[nodiscard]] static bool value_matches(const MetaValue& have, const FilterValue& want) {
        if (const auto* s = std::get_if<std::string>(&want)) {
            if (const auto* hs = std::get_if<std::string>(&have)) return *hs == *s;
            if (const auto* hl = std::get_if<std::vector<std::string>>(&have)) {
                for (const auto& e : *hl)
                    if (e == *s) return true;
            }
            return false;
        }
        if (const auto* x = std::get_if<double>(&want)) {
            const auto* hx = std::get_if<double>(&have);
            return hx && *hx == *x;
        }
        const auto* hd = std::get_if<Date>(&have);
        return hd && *hd == std::get<Date>(want);
    }

private:
    explicit Filter(Kind k) : kind_(k) {}

    static void check_value(const FilterValue& v, const char* where) {
        if (const auto* x = std::get_if<double>(&v); x && std::isnan(*x))
            throw InvalidArgument(std::string(where) + ": value is NaN");
    }
    /// a op b, flattened: an operand of the same kind gives its children. When `a` is
    /// of kind k its children are kept in place and `b` appended, so a chain
    /// a && b && c && ... of n terms costs O(n) in all, not O(n^2).
    static Filter combine(Kind k, Filter a, Filter b) {
        Filter f(k);
        if (a.kind_ == k) f.children_ = std::move(a.children_);
        else f.children_.push_back(std::move(a));
        if (b.kind_ == k) {
            for (auto& c : b.children_) f.children_.push_back(std::move(c));
        } else {
            f.children_.push_back(std::move(b));
        }
        return f;
    }
    template <class T>
    [[nodiscard]] bool bounds_ok(T x, T lo, T hi) const {
        if (lo_ && (lo_inclusive_ ? x < lo : x <= lo)) return false;
        if (hi_ && (hi_inclusive_ ? x > hi : x >= hi)) return false;
        return true;
    }
    static std::string value_text(const FilterValue& v) {
        if (const auto* s = std::get_if<std::string>(&v)) {
            std::string q = "\"";
            for (char c : *s) {
                if (c == '"' || c == '\\') q.push_back('\\');
                q.push_back(c);
            }
            return q + "\"";
        }
        if (const auto* d = std::get_if<Date>(&v)) return "date:" + d->to_string();
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", std::get<double>(v));
        return std::string("num:") + buf;
    }

    Kind kind_ = Kind::all;
    std::string field_;
    std::vector<FilterValue> values_;
    std::optional<FilterValue> lo_, hi_;
    bool lo_inclusive_ = true, hi_inclusive_ = true;
    std::vector<Filter> children_;
};

/// How deep parse_filter lets parentheses and negations nest.
inline constexpr std::size_t max_filter_depth = 64;

}  // namespace ragpp
