// ragpp: MetadataIndex, postings over metadata values, so that a Filter compiles to
// the DocSet of matching documents without reading any document.
//
// For every field it keeps terms: the field's presence, each string value (and each
// element of a string list), each number and each date (numbers and dates in ordered
// maps, for ranges). Each term has a posting, the sorted DocIds having it; each
// document keeps only the ids of its terms (not a copy of its metadata), so removing
// it is exact: a removed document appears in no posting and in no compiled set, and a
// term whose posting empties is forgotten.
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
    MetadataIndex() = default;
    /// A copy's terms point at its own fields (the implicit copy pointed them at the
    /// original's, which a removal from the copy then changed, or read after it was gone).
    MetadataIndex(const MetadataIndex& o)
        : fields_(o.fields_), terms_(o.terms_), free_terms_(o.free_terms_), doc_terms_(o.doc_terms_), live_(o.live_),
          size_(o.size_) {
        for (auto& t : terms_)
            if (t.field) t.field = &*fields_.find(t.field->first);
    }
    MetadataIndex& operator=(const MetadataIndex& o) {
        if (this != &o) *this = MetadataIndex(o);
        return *this;
    }
    // A move keeps the map's nodes, so the terms' pointers stay valid.
    MetadataIndex(MetadataIndex&&) = default;
    MetadataIndex& operator=(MetadataIndex&&) = default;
    ~MetadataIndex() = default;

    /// Indexes `metadata` under `id`. Throws DuplicateError when `id` is indexed,
    /// InvalidArgument when a number is NaN; nothing changes then.
    void add_document(DocId id, const Metadata& metadata) {
        if (contains(id)) throw DuplicateError("MetadataIndex: DocId " + std::to_string(id) + " is already indexed");
        validate(metadata, "DocId " + std::to_string(id));
        std::vector<std::uint32_t> terms;
        for (const auto& [name, value] : metadata) {
            auto fit = fields_.find(name);
            if (fit == fields_.end()) fit = fields_.emplace(name, Field{}).first;
            Field& f = fit->second;
            if (f.present == no_term) f.present = new_term(&*fit, Key{});
            terms.push_back(f.present);
            std::visit(
                [&](const auto& v) {
                    using T = std::decay_t<decltype(v)>;
                    if constexpr (std::is_same_v<T, std::string>) terms.push_back(term_of(f.strings, v, &*fit));
                    else if constexpr (std::is_same_v<T, double>) terms.push_back(term_of(f.numbers, v, &*fit));
                    else if constexpr (std::is_same_v<T, Date>) terms.push_back(term_of(f.dates, v.days, &*fit));
                    else
                        for (const auto& e : v) terms.push_back(term_of(f.strings, e, &*fit));
                },
                value);
        }
        std::sort(terms.begin(), terms.end());  // a list may repeat a value: one posting entry
        terms.erase(std::unique(terms.begin(), terms.end()), terms.end());
        for (std::uint32_t t : terms) insert(terms_[t].posting, id);
        if (id >= doc_terms_.size()) doc_terms_.resize(std::size_t{id} + 1);
        doc_terms_[id] = std::move(terms);
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
        if (!contains(id)) throw NotFoundError("MetadataIndex: no document with DocId " + std::to_string(id));
        for (std::uint32_t t : doc_terms_[id]) {
            erase(terms_[t].posting, id);
            if (terms_[t].posting.empty()) free_term(t);
        }
        doc_terms_[id] = {};
        doc_terms_[id].shrink_to_fit();
        live_.reset(id);
        --size_;
    }

    /// The documents passing `filter`, among the indexed ones.
    [[nodiscard]] DocSet compile(const Filter& filter) const {
        using K = Filter::Kind;
        switch (filter.kind()) {
            case K::all: return live();
            case K::none: return DocSet(doc_terms_.size());
            case K::exists: {
                DocSet s(doc_terms_.size());
                if (const Field* f = field(filter.field()); f && f->present != no_term) set_all(s, terms_[f->present].posting);
                return s;
            }
            case K::eq:
            case K::in: {
                DocSet s(doc_terms_.size());
                const Field* f = field(filter.field());
                if (!f) return s;
                for (const auto& v : filter.values()) {
                    if (const auto* str = std::get_if<std::string>(&v)) {
                        if (auto it = f->strings.find(*str); it != f->strings.end()) set_all(s, terms_[it->second].posting);
                    } else if (const auto* x = std::get_if<double>(&v)) {
                        if (auto it = f->numbers.find(*x); it != f->numbers.end()) set_all(s, terms_[it->second].posting);
                    } else if (auto it = f->dates.find(std::get<Date>(v).days); it != f->dates.end()) {
                        set_all(s, terms_[it->second].posting);
                    }
                }
                return s;
            }
            case K::range: {
                DocSet s(doc_terms_.size());
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
                DocSet s(doc_terms_.size());
                for (const auto& c : filter.children()) s |= compile(c);
                return s;
            }
            case K::not_: return live() - compile(filter.children().front());
        }
        return DocSet(doc_terms_.size());
    }

    /// The indexed documents.
    [[nodiscard]] DocSet live() const {
        DocSet s = live_;
        s.resize(doc_terms_.size());
        return s;
    }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool contains(DocId id) const noexcept { return live_.test(id); }
    /// Distinct fields currently indexed.
    [[nodiscard]] std::size_t field_count() const noexcept { return fields_.size(); }
    /// Total postings entries, field presence included (zero once every document is removed).
    [[nodiscard]] std::size_t posting_entries() const noexcept {
        std::size_t n = 0;
        for (const auto& t : terms_) n += t.posting.size();
        return n;
    }

private:
    using Posting = std::vector<DocId>;
    static constexpr std::uint32_t no_term = static_cast<std::uint32_t>(-1);
    /// A field's terms: its presence, and one term per distinct value.
    struct Field {
        std::uint32_t present = no_term;
        std::unordered_map<std::string, std::uint32_t> strings;
        std::map<double, std::uint32_t> numbers;
        std::map<std::int32_t, std::uint32_t> dates;
    };
    using FieldEntry = std::pair<const std::string, Field>;
    /// What a term is, to erase it from its field when its posting empties.
    using Key = std::variant<std::monostate, std::string, double, std::int32_t>;
    struct Term {
        FieldEntry* field = nullptr;  // stable: unordered_map nodes do not move
        Key key;
        Posting posting;
    };

    const Field* field(const std::string& name) const {
        auto it = fields_.find(name);
        return it == fields_.end() ? nullptr : &it->second;
    }
    std::uint32_t new_term(FieldEntry* f, Key key) {
        std::uint32_t t;
        if (!free_terms_.empty()) {
            t = free_terms_.back();
            free_terms_.pop_back();
        } else {
            t = static_cast<std::uint32_t>(terms_.size());
            terms_.emplace_back();
        }
        terms_[t].field = f;
        terms_[t].key = std::move(key);
        return t;
    }
    template <class Map, class V>
    std::uint32_t term_of(Map& m, const V& v, FieldEntry* f) {
        auto it = m.find(v);
        if (it != m.end()) return it->second;
        const std::uint32_t t = new_term(f, Key{v});
        m.emplace(v, t);
        return t;
    }
    /// Forgets term t (its posting is empty), and its field when that was its presence.
    void free_term(std::uint32_t t) {
        Term& term = terms_[t];
        Field& f = term.field->second;
        std::visit(
            [&](const auto& k) {
                using T = std::decay_t<decltype(k)>;
                if constexpr (std::is_same_v<T, std::string>) f.strings.erase(k);
                else if constexpr (std::is_same_v<T, double>) f.numbers.erase(k);
                else if constexpr (std::is_same_v<T, std::int32_t>) f.dates.erase(k);
                else f.present = no_term;
            },
            term.key);
        if (f.present == no_term && f.strings.empty() && f.numbers.empty() && f.dates.empty())
            fields_.erase(term.field->first);
        term = Term{};
        term.posting.shrink_to_fit();
        free_terms_.push_back(t);
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
    static void set_all(DocSet& s, const Posting& p) {
        for (DocId id : p) s.set(id);
    }
    template <class Map, class Get>
    void range_into(DocSet& s, const Map& m, const Filter& f, Get get) const {
        if (f.lower() && f.upper()) {
            const auto lo = get(*f.lower()), hi = get(*f.upper());
            if (hi < lo || (!(lo < hi) && !(f.lower_inclusive() && f.upper_inclusive()))) return;  // empty interval
        }
        auto it = f.lower() ? (f.lower_inclusive() ? m.lower_bound(get(*f.lower())) : m.upper_bound(get(*f.lower())))
                            : m.begin();
        const auto end = f.upper() ? (f.upper_inclusive() ? m.upper_bound(get(*f.upper())) : m.lower_bound(get(*f.upper())))
                                   : m.end();
        for (; it != end; ++it) set_all(s, terms_[it->second].posting);
    }

    std::unordered_map<std::string, Field> fields_;
    std::vector<Term> terms_;
    std::vector<std::uint32_t> free_terms_;
    std::vector<std::vector<std::uint32_t>> doc_terms_;  // the terms of each document, to remove it exactly
    DocSet live_;
    std::size_t size_ = 0;
};

}  // namespace ragpp
