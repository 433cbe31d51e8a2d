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
//
// Saved and opened in place: save(path) writes the postings (filter/detail/frozen_metadata.hpp
// has the layout); load(path, {.mmap = true}) uses them from the mapped file, so opening costs
// O(fields), not O(documents), and a filter reads only its postings (each value found by
// binary search). The index stays frozen until its first add or remove, which builds the
// structures above from the postings (O(postings), no document read).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <span>
#include <vector>

#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/filter/detail/frozen_metadata.hpp>
#include <ragpp/filter/filter.hpp>

namespace ragpp {

class MetadataIndex {
public:
    MetadataIndex() = default;
    /// A copy's terms point at its own fields (the implicit copy pointed them at the
    /// original's, which a removal from the copy then changed, or read after it was gone).
    MetadataIndex(const MetadataIndex& o)
        : fields_(o.fields_), terms_(o.terms_), free_terms_(o.free_terms_), doc_terms_(o.doc_terms_), live_(o.live_),
          size_(o.size_), frozen_(o.frozen_) {  // a frozen index shares its (immutable) file
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
        thaw();
        if (contains(id)) throw DuplicateError("MetadataIndex: DocId " + std::to_string(id) + " is already indexed");
        validate(metadata, "DocId " + std::to_string(id));
        std::size_t count = 0;  // exact: the list is kept for the document's life
        for (const auto& [name, value] : metadata) {
            const auto* list = std::get_if<std::vector<std::string>>(&value);
            count += 1 + (list ? list->size() : 1);
        }
        std::vector<std::uint32_t> terms;
        terms.reserve(count);
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
        if (terms.size() != count) terms.shrink_to_fit();
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
        thaw();
        for (std::uint32_t t : doc_terms_[id]) {
            erase(terms_[t].posting, id);
            if (terms_[t].posting.empty()) free_term(t);
        }
        doc_terms_[id] = {};
        doc_terms_[id].shrink_to_fit();
        live_.reset(id);
        --size_;
    }

    /// Removes the documents `ids` at once: each posting they are in is filtered once, so
    /// the cost is proportional to the postings of their values (once per call), where
    /// removing them one by one costs (documents x postings of a shared value). Throws
    /// NotFoundError for an id not indexed, InvalidArgument for an id given twice;
    /// nothing changes then.
    void remove_documents(std::span<const DocId> ids) {
        std::vector<DocId> sorted(ids.begin(), ids.end());
        std::sort(sorted.begin(), sorted.end());
        for (std::size_t i = 0; i < sorted.size(); ++i) {
            if (!contains(sorted[i])) throw NotFoundError("MetadataIndex: no document with DocId " + std::to_string(sorted[i]));
            if (i > 0 && sorted[i] == sorted[i - 1])
                throw InvalidArgument("MetadataIndex::remove_documents: DocId " + std::to_string(sorted[i]) + " given twice");
        }
        if (sorted.empty()) return;
        thaw();
        std::vector<std::uint32_t> touched;
        for (const DocId id : sorted) touched.insert(touched.end(), doc_terms_[id].begin(), doc_terms_[id].end());
        std::sort(touched.begin(), touched.end());
        touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
        for (const std::uint32_t t : touched) {
            auto& posting = terms_[t].posting;
            std::erase_if(posting, [&](DocId d) { return std::binary_search(sorted.begin(), sorted.end(), d); });
            if (posting.empty()) free_term(t);
        }
        for (const DocId id : sorted) {
            std::vector<std::uint32_t>().swap(doc_terms_[id]);
            live_.reset(id);
            --size_;
        }
    }

    /// The documents passing `filter`, among the indexed ones.
    [[nodiscard]] DocSet compile(const Filter& filter) const {
        using K = Filter::Kind;
        switch (filter.kind()) {
            case K::all: return live();
            case K::none: return DocSet(universe());
            case K::exists: {
                DocSet s(universe());
                if (frozen_) {
                    if (const auto* f = frozen_->field(filter.field())) frozen_->set_all(s, f->present_begin, f->present_end, f->name);
                } else if (const Field* f = field(filter.field()); f && f->present != no_term) {
                    set_all(s, terms_[f->present].posting);
                }
                return s;
            }
            case K::eq:
            case K::in: {
                DocSet s(universe());
                if (frozen_) {
                    if (const auto* f = frozen_->field(filter.field()))
                        for (const auto& v : filter.values()) frozen_value_into(s, *f, v);
                    return s;
                }
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
                DocSet s(universe());
                const FilterValue& any = filter.lower() ? *filter.lower() : *filter.upper();
                if (frozen_) {
                    if (const auto* f = frozen_->field(filter.field())) {
                        if (std::holds_alternative<double>(any))
                            frozen_range_into(s, *f, f->number_values, f->numbers, f->number_postings, filter,
                                              [](const FilterValue& v) { return std::get<double>(v); });
                        else
                            frozen_range_into(s, *f, f->date_values, f->dates, f->date_postings, filter,
                                              [](const FilterValue& v) { return std::get<Date>(v).days; });
                    }
                    return s;
                }
                const Field* f = field(filter.field());
                if (!f) return s;
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
                DocSet s(universe());
                for (const auto& c : filter.children()) s |= compile(c);
                return s;
            }
            case K::not_: return live() - compile(filter.children().front());
        }
        return DocSet(universe());
    }

    /// The indexed documents.
    [[nodiscard]] DocSet live() const {
        DocSet s = live_;
        s.resize(universe());
        return s;
    }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool contains(DocId id) const noexcept { return live_.test(id); }
    /// The names of the fields indexed, sorted.
    [[nodiscard]] std::vector<std::string> field_names() const {
        std::vector<std::string> out;
        if (frozen_)
            for (const auto& f : frozen_->fields()) out.emplace_back(f.name);
        else
            for (const auto& [name, f] : fields_) out.push_back(name);
        std::sort(out.begin(), out.end());
        return out;
    }
    /// Distinct fields currently indexed.
    [[nodiscard]] std::size_t field_count() const noexcept { return frozen_ ? frozen_->fields().size() : fields_.size(); }
    /// Total postings entries, field presence included (zero once every document is removed).
    [[nodiscard]] std::size_t posting_entries() const noexcept {
        if (frozen_) return static_cast<std::size_t>(frozen_->entries());
        std::size_t n = 0;
        for (const auto& t : terms_) n += t.posting.size();
        return n;
    }
    /// True while the index is used in place from a file (load(), before any add or remove).
    [[nodiscard]] bool frozen() const noexcept { return frozen_ != nullptr; }

    /// Writes the index to `path` (detail::metadata_format; atomically: temporary file +
    /// rename). A frozen index writes the payload it was read from. Throws IoError.
    void save(const std::filesystem::path& path) const {
        detail::BinaryWriter w(path);  // streamed: the file is never whole in memory
        if (frozen_) {
            w.bytes(frozen_->payload().data(), frozen_->payload().size());
            w.save(path, detail::metadata_format);
            return;
        }
        std::vector<const FieldEntry*> fields;
        for (const auto& f : fields_) fields.push_back(&f);
        std::sort(fields.begin(), fields.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
        // The postings are written last, in field and value order: the terms in that order
        // (4 bytes a term) and the running count, not a copy of every posting.
        std::vector<std::uint32_t> order;
        order.reserve(terms_.size() - free_terms_.size());
        std::uint64_t posted = 0;
        auto add = [&](std::uint32_t t) {
            order.push_back(t);
            posted += terms_[t].posting.size();
            return posted;
        };
        std::size_t at = detail::binary_header_size;
        auto put = [&](const void* p, std::size_t n) {
            w.bytes(p, n);
            at += n;
        };
        auto u64 = [&](std::uint64_t v) { put(&v, 8); };
        std::size_t universe = doc_terms_.size();  // one past the largest indexed DocId
        while (universe > 0 && !live_.test(static_cast<DocId>(universe - 1))) --universe;
        u64(universe);
        u64(size_);
        std::vector<DocId> holes;
        for (std::size_t id = 0; id < universe; ++id)
            if (!live_.test(static_cast<DocId>(id))) holes.push_back(static_cast<DocId>(id));
        u64(holes.size());
        put(holes.data(), holes.size() * 4);
        u64(posting_entries());
        u64(fields.size());
        for (const auto* fe : fields) {
            const Field& f = fe->second;
            const std::string& name = fe->first;
            const auto n = static_cast<std::uint32_t>(name.size());
            put(&n, 4);
            put(name.data(), name.size());
            u64(posted);
            u64(f.present == no_term ? posted : add(f.present));
            std::vector<std::pair<std::string_view, std::uint32_t>> strings(f.strings.begin(), f.strings.end());
            std::sort(strings.begin(), strings.end());
            u64(strings.size());
            u64(f.numbers.size());
            u64(f.dates.size());
            detail::write_padding(w, at, 8);
            std::vector<std::uint64_t> text_at, string_postings;  // exact: no doubling
            text_at.reserve(strings.size() + 1);
            string_postings.reserve(strings.size() + 1);
            text_at.push_back(0);
            string_postings.push_back(posted);
            std::string text;
            for (const auto& [v, t] : strings) {
                text += v;
                text_at.push_back(text.size());
                string_postings.push_back(add(t));
            }
            put(text_at.data(), text_at.size() * 8);
            put(string_postings.data(), string_postings.size() * 8);
            put(text.data(), text.size());
            detail::write_padding(w, at, 8);
            std::vector<std::uint64_t> number_postings, date_postings;
            number_postings.reserve(f.numbers.size() + 1);
            date_postings.reserve(f.dates.size() + 1);
            number_postings.push_back(posted);
            for (const auto& [v, t] : f.numbers) {
                put(&v, 8);
                number_postings.push_back(add(t));
            }
            put(number_postings.data(), number_postings.size() * 8);
            date_postings.push_back(posted);
            for (const auto& [v, t] : f.dates) {
                put(&v, 4);
                date_postings.push_back(add(t));
            }
            detail::write_padding(w, at, 8);
            put(date_postings.data(), date_postings.size() * 8);
        }
        detail::write_padding(w, at, 8);
        for (const std::uint32_t t : order) put(terms_[t].posting.data(), terms_[t].posting.size() * 4);
        w.save(path, detail::metadata_format);
    }

    /// The index saved at `path`, used in place (frozen, see the header comment). Throws
    /// IoError when it cannot be read, FormatError naming the file when it is truncated,
    /// damaged or of another version (with options.verify: also any order, offset or
    /// DocId out of place; otherwise those are found when a filter reads them).
    /// `max_universe`, when given, bounds the file's universe (one past its largest DocId)
    /// before anything is allocated for it (a caller that knows the DocIds passes it).
    [[nodiscard]] static MetadataIndex load(const std::filesystem::path& path, OpenOptions options = {},
                                            std::optional<std::size_t> max_universe = std::nullopt) {
        MetadataIndex m;
        m.frozen_ = std::make_shared<const detail::FrozenMetadata>(
            path, options.mmap, options.verify, max_universe ? std::uint64_t{*max_universe} : std::uint64_t{1} << 32);
        const auto u = static_cast<std::size_t>(m.frozen_->universe());
        m.live_ = DocSet::all(u);
        for (DocId id : m.frozen_->holes()) m.live_.reset(id);
        m.size_ = static_cast<std::size_t>(m.frozen_->size());
        return m;
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

    [[nodiscard]] std::size_t universe() const noexcept {
        return frozen_ ? static_cast<std::size_t>(frozen_->universe()) : doc_terms_.size();
    }
    /// The documents of `f` having value `v` (a frozen index).
    void frozen_value_into(DocSet& s, const detail::FrozenMetadataField& f, const FilterValue& v) const {
        auto exact = [&](const auto* values, std::size_t n, const std::uint64_t* p, auto x) {
            const auto* it = std::lower_bound(values, values + n, x);
            if (it != values + n && *it == x) {
                const auto i = static_cast<std::size_t>(it - values);
                frozen_->set_all(s, p[i], p[i + 1], f.name);
            }
        };
        if (const auto* str = std::get_if<std::string>(&v)) {
            if (const std::size_t i = frozen_->find_string(f, *str); i < f.strings)
                frozen_->set_all(s, f.string_postings[i], f.string_postings[i + 1], f.name);
        } else if (const auto* x = std::get_if<double>(&v)) {
            exact(f.number_values, f.numbers, f.number_postings, *x);
        } else {
            exact(f.date_values, f.dates, f.date_postings, std::get<Date>(v).days);
        }
    }
    /// range_into for a frozen index: the postings of a range of values are one span.
    template <class V, class Get>
    void frozen_range_into(DocSet& s, const detail::FrozenMetadataField& f, const V* values, std::size_t n,
                           const std::uint64_t* p, const Filter& filter, Get get) const {
        if (filter.lower() && filter.upper()) {
            const auto lo = get(*filter.lower()), hi = get(*filter.upper());
            if (hi < lo || (!(lo < hi) && !(filter.lower_inclusive() && filter.upper_inclusive()))) return;
        }
        const V* b = values;
        const V* e = values + n;
        if (filter.lower())
            b = filter.lower_inclusive() ? std::lower_bound(values, e, static_cast<V>(get(*filter.lower())))
                                         : std::upper_bound(values, e, static_cast<V>(get(*filter.lower())));
        if (filter.upper())
            e = filter.upper_inclusive() ? std::upper_bound(values, values + n, static_cast<V>(get(*filter.upper())))
                                         : std::lower_bound(values, values + n, static_cast<V>(get(*filter.upper())));
        if (b < e) frozen_->set_all(s, p[b - values], p[e - values], f.name);
    }
    /// Builds the live structures from the frozen postings (the first add or remove).
    void thaw() {
        if (!frozen_) return;
        const auto fz = frozen_;  // kept until the end: a damaged posting leaves the index frozen
        const std::size_t u = static_cast<std::size_t>(fz->universe());
        MetadataIndex m;
        m.doc_terms_.resize(u);
        auto term = [&](FieldEntry* fe, Key key, std::uint64_t b, std::uint64_t e) {
            const std::uint32_t t = m.new_term(fe, std::move(key));
            const auto p = fz->posting(b, e, fe->first);
            for (std::size_t i = 0; i < p.size(); ++i) {
                if (p[i] >= u || (i > 0 && p[i] <= p[i - 1]))
                    fz->fail("field '" + fe->first + "': DocId " + std::to_string(p[i]) + " is out of order or beyond the universe");
                m.doc_terms_[p[i]].push_back(t);
            }
            m.terms_[t].posting.assign(p.begin(), p.end());
            return t;
        };
        for (const auto& f : fz->fields()) {
            auto* fe = &*m.fields_.emplace(std::string(f.name), Field{}).first;
            Field& field = fe->second;
            if (f.present_begin != f.present_end) field.present = term(fe, Key{}, f.present_begin, f.present_end);
            for (std::size_t i = 0; i < f.strings; ++i) {
                std::string v(fz->string_at(f, i));
                field.strings.emplace(v, term(fe, Key{v}, f.string_postings[i], f.string_postings[i + 1]));
            }
            for (std::size_t i = 0; i < f.numbers; ++i)
                field.numbers.emplace(f.number_values[i], term(fe, Key{f.number_values[i]}, f.number_postings[i], f.number_postings[i + 1]));
            for (std::size_t i = 0; i < f.dates; ++i)
                field.dates.emplace(f.date_values[i], term(fe, Key{f.date_values[i]}, f.date_postings[i], f.date_postings[i + 1]));
        }
        m.live_ = live_;
        m.size_ = size_;
        *this = std::move(m);
    }

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
    std::shared_ptr<const detail::FrozenMetadata> frozen_;  // set while used in place (load())
};

}  // namespace ragpp
