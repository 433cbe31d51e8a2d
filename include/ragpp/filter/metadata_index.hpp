// ragpp: MetadataIndex, postings over metadata values, so that a Filter compiles to
// the DocSet of matching documents without reading any document.
//
// For every field it keeps: the documents having the field; for each string value
// (and each element of a string list) the sorted DocIds having it; numbers and dates
// in ordered maps (value -> sorted DocIds) for ranges. Postings are exact under add
// and remove: a removed document appears in no posting and in no compiled set.
//
// Complexity, with U = one past the largest DocId, P = the postings read:
//   compile(eq)      O(U/64 + P)       (a zeroed bitset, then one bit per posting)
//   compile(range)   O(U/64 + log V + P) over the V distinct values of the field
//   compile(and/or)  O(U/64) per child on top of the children
//   compile(not)     O(U/64)
//   add_document     O(F log V + F * p) for F fields (p: insertion into a posting;
//                    O(1) when ids are added in increasing order, as a Retriever does)
//   remove_document  O(F * p)
// Threading: compile and every const member may run concurrently; add and remove
// need exclusive access.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/filter/filter.hpp>

namespace ragpp {

class MetadataIndex {
public:
    /// Indexes `metadata` under `id`. Throws DuplicateError when `id` is indexed,
    /// InvalidArgument when a number is NaN; nothing changes then.
    void add_document(DocId id, const Metadata& metadata) {
        if (id < docs_.size() && docs_[id]) throw DuplicateError("MetadataIndex: DocId " + std::to_string(id) + " is already indexed");
        validate(metadata, "DocId " + std::to_string(id));
        if (id >= docs_.size()) docs_.resize(std::size_t{id} + 1);
        docs_[id] = metadata;
        for (const auto& [field, value] : metadata) {
            Field& f = fields_[field];
            insert(f.present, id);
            std::visit(
                [&](const auto& v) {
                    using T = std::decay_t<decltype(v)>;
                    if constexpr (std::is_same_v<T, std::string>) insert(f.strings[v], id);
                    else if constexpr (std::is_same_v<T, double>) insert(f.numbers[v], id);
                    else if constexpr (std::is_same_v<T, Date>) insert(f.dates[v.days], id);
                    else
                        for (const auto& e : v) insert(f.strings[e], id);
                },
                value);
        }
        live_.set(id);
        ++size_;
    }
    void add_document(DocId id, const Document& doc) { add_document(id, doc.metadata); }

    /// Throws InvalidArgument naming `what` when `metadata` cannot be indexed (a NaN number).
    static void validate(const Metadata& metadata, const std::string& what) {
        for (const auto& [field, value] : metadata)
            if (const auto* x = std::get_if<double>(&value); x && std::isnan(*x))
                throw InvalidArgument("MetadataIndex: field '" + field + "' of " + what + " is NaN");
    }

    /// Removes `id` from every posting. Throws NotFoundError when it is not indexed.
    void remove_document(DocId id) {
        if (id >= docs_.size() || !docs_[id])
            throw NotFoundError("MetadataIndex: no document with DocId " + std::to_string(id));
        for (const auto& [field, value] : *docs_[id]) {
            auto fit = fields_.find(field);
            Field& f = fit->second;
            erase(f.present, id);
            std::visit(
                [&](const auto& v) {
                    using T = std::decay_t<decltype(v)>;
                    if constexpr (std::is_same_v<T, std::string>) erase_in(f.strings, v, id);
                    else if constexpr (std::is_same_v<T, double>) erase_in(f.numbers, v, id);
                    else if constexpr (std::is_same_v<T, Date>) erase_in(f.dates, v.days, id);
                    else
                        for (const auto& e : v) erase_in(f.strings, e, id);
                },
                value);
            if (f.present.empty()) fields_.erase(fit);
        }
        docs_[id].reset();
        live_.reset(id);
        --size_;
    }

    /// The documents passing `filter`, among the indexed ones.
    [[nodiscard]] DocSet compile(const Filter& filter) const {
        using K = Filter::Kind;
        switch (filter.kind()) {
            case K::all: return live();
            case K::none: return DocSet(docs_.size());
            case K::exists: {
                DocSet s(docs_.size());
                if (const Field* f = field(filter.field())) set_all(s, f->present);
                return s;
            }
            case K::eq:
            case K::in: {
                DocSet s(docs_.size());
                const Field* f = field(filter.field());
                if (!f) return s;
                for (const auto& v : filter.values()) {
                    if (const auto* str = std::get_if<std::string>(&v)) {
                        if (auto it = f->strings.find(*str); it != f->strings.end()) set_all(s, it->second);
                    } else if (const auto* x = std::get_if<double>(&v)) {
                        if (auto it = f->numbers.find(*x); it != f->numbers.end()) set_all(s, it->second);
                    } else if (auto it = f->dates.find(std::get<Date>(v).days); it != f->dates.end()) {
                        set_all(s, it->second);
                    }
                }
                return s;
            }
            case K::range: {
                DocSet s(docs_.size());
                const Field* f = field(filter.field());
                if (!f) return s;
                const FilterValue& any = filter.lower() ? *filter.lower() : *filter.upper();
                if (std::holds_alternative<double>(any)) range_into(s, f->numbers, filter, [](const FilterValue& v) { return std::get<double>(v); });
                else range_into(s, f->dates, filter, [](const FilterValue& v) { return std::get<Date>(v).days; });
                return s;
            }
            case K::and_: {
                DocSet s = compile(filter.children().front());
                for (std::size_t i = 1; i < filter.children().size() && !s.empty(); ++i) s &= compile(filter.children()[i]);
                return s;
            }
            case K::or_: {
                DocSet s(docs_.size());
                for (const auto& c : filter.children()) s |= compile(c);
                return s;
            }
            case K::not_: return live() - compile(filter.children().front());
        }
        return DocSet(docs_.size());
    }

    /// The indexed documents.
    [[nodiscard]] DocSet live() const {
        DocSet s = live_;
        s.resize(docs_.size());
        return s;
    }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool contains(DocId id) const noexcept { return id < docs_.size() && docs_[id].has_value(); }
    /// The metadata indexed under `id`, or null.
    [[nodiscard]] const Metadata* metadata(DocId id) const noexcept {
        return contains(id) ? &*docs_[id] : nullptr;
    }
    /// Distinct fields currently indexed.
    [[nodiscard]] std::size_t field_count() const noexcept { return fields_.size(); }
    /// Total postings entries (for tests: zero once every document is removed).
    [[nodiscard]] std::size_t posting_entries() const noexcept {
        std::size_t n = 0;
        for (const auto& [name, f] : fields_) {
            n += f.present.size();
            for (const auto& [k, p] : f.strings) n += p.size();
            for (const auto& [k, p] : f.numbers) n += p.size();
            for (const auto& [k, p] : f.dates) n += p.size();
        }
        return n;
    }

private:
    using Posting = std::vector<DocId>;
    struct Field {
        Posting present;
        std::unordered_map<std::string, Posting> strings;
        std::map<double, Posting> numbers;
        std::map<std::int32_t, Posting> dates;
    };

    const Field* field(const std::string& name) const {
        auto it = fields_.find(name);
        return it == fields_.end() ? nullptr : &it->second;
    }
    static void insert(Posting& p, DocId id) {
        if (p.empty() || p.back() < id) {
            p.push_back(id);
            return;
        }
        auto it = std::lower_bound(p.begin(), p.end(), id);
        if (it == p.end() || *it != id) p.insert(it, id);  // a list may repeat a value
    }
    static void erase(Posting& p, DocId id) {
        auto it = std::lower_bound(p.begin(), p.end(), id);
        if (it != p.end() && *it == id) p.erase(it);
    }
    template <class Map, class Key>
    static void erase_in(Map& m, const Key& key, DocId id) {
        auto it = m.find(key);
        if (it == m.end()) return;
        erase(it->second, id);
        if (it->second.empty()) m.erase(it);
    }
    static void set_all(DocSet& s, const Posting& p) {
        for (DocId id : p) s.set(id);
    }
    template <class Map, class Get>
    static void range_into(DocSet& s, const Map& m, const Filter& f, Get get) {
        if (f.lower() && f.upper()) {
            const auto lo = get(*f.lower()), hi = get(*f.upper());
            if (hi < lo || (!(lo < hi) && !(f.lower_inclusive() && f.upper_inclusive()))) return;  // empty interval
        }
        auto it = f.lower() ? (f.lower_inclusive() ? m.lower_bound(get(*f.lower())) : m.upper_bound(get(*f.lower())))
                            : m.begin();
        const auto end = f.upper() ? (f.upper_inclusive() ? m.upper_bound(get(*f.upper())) : m.lower_bound(get(*f.upper())))
                                   : m.end();
        for (; it != end; ++it) set_all(s, it->second);
    }

    std::unordered_map<std::string, Field> fields_;
    std::vector<std::optional<Metadata>> docs_;
    DocSet live_;
    std::size_t size_ = 0;
};

}  // namespace ragpp
