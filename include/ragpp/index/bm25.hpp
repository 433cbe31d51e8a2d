// ragpp: BM25Index<Analyzer>, the lexical index.
//
// Postings keep raw term frequencies and the index keeps exact document lengths, so
// the BM25 variant's idf and length normalisation are computed at query time: k1, b
// and delta can change per query (BM25SearchOptions) without re-indexing, and live
// updates keep N, the average length and every document frequency exact.
//
// The BM25 formulas and their sources are in index/bm25/scoring.hpp (variants,
// parameters, idf and tf parts, BM25F), the fields in index/bm25/fields.hpp.
//
// ## Headers (split as PISA splits query processing)
//   index/bm25.hpp                   BM25Index (this header; includes all the others)
//   index/bm25/scoring.hpp           BM25Variant, BM25Params, bm25_idf, bm25_tf_part, bm25f_tf_part
//   index/bm25/fields.hpp            bm25_document_fields, bm25_title_key, bm25_identifier_like
//   index/bm25/algorithm.hpp         BM25Algorithm, BM25Strategy, BM25SearchStats
//   index/detail/bm25_blocks.hpp     block-compressed posting lists (the body's) and their cursor
//   index/detail/bm25_postings.hpp   skylines, the fields' posting lists, the galloping cursor step, the dictionary
//   index/detail/bm25_plan.hpp       a resolved query and the score of one document
//   index/detail/bm25_exhaustive.hpp, bm25_accumulate.hpp, bm25_maxscore.hpp   one per top-k algorithm
//   index/detail/bm25_file.hpp       the file's payload (save / load)
//
// ## Top k
// Scores are computed in double and ranked as the float returned in Hit::score
// (higher first, ties by smaller id), so a result list is ordered by its own scores.
// Three algorithms return exactly the same ids and scores (every per-document sum runs
// over the query terms in query order, so it is the same double):
// - exhaustive: document at a time over every matching document (`search_exhaustive`,
//   the oracle);
// - accumulate: term at a time into one accumulator per document; valid when
//   tfpart(0) = 0 (not the bm25l / bm25plus families unless delta = 0);
// - maxscore: MaxScore (Turtle & Flood, "Query evaluation: strategies and
//   optimizations", IP&M 1995) with exact per-term upper bounds computed at query
//   time from each list's (tf, length) skyline; valid when every term weight is >= 0.
// Neither shortcut applies to rank_bm25_l / rank_bm25_plus (they score every
// document), and MaxScore not to rank_bm25_okapi with a negative term weight: those
// fall back to the exhaustive scorer. `search` chooses (BM25Strategy::automatic):
// accumulate on small indexes when the query's lists are long relative to the
// collection, else MaxScore where valid.
//
// ## Threading
// `search*` are const and may run from many threads at once; `add_document`,
// `remove_document`, `update_document`, `set_params` need exclusive access.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include <ragpp/core/concepts.hpp>
#include <ragpp/core/error.hpp>
#include <ragpp/core/types.hpp>
#include <ragpp/detail/binary_file.hpp>
#include <ragpp/detail/mapped_file.hpp>
#include <ragpp/detail/topk.hpp>
#include <ragpp/detail/whitespace.hpp>
#include <ragpp/index/bm25/algorithm.hpp>
#include <ragpp/index/bm25/fields.hpp>
#include <ragpp/index/bm25/scoring.hpp>
#include <ragpp/index/detail/bm25_accumulate.hpp>
#include <ragpp/index/detail/bm25_blocks.hpp>
#include <ragpp/index/detail/bm25_exhaustive.hpp>
#include <ragpp/index/detail/bm25_file.hpp>
#include <ragpp/index/detail/bm25_maxscore.hpp>
#include <ragpp/index/detail/bm25_plan.hpp>
#include <ragpp/index/detail/bm25_postings.hpp>
#include <ragpp/index/options.hpp>
#include <ragpp/text/whitespace.hpp>

namespace ragpp {

// Members longer than a few lines are defined after the class, not inside it: GCC
// instantiates a member defined inside a class to consider inlining it even when the
// class is declared `extern template`, so a program linking ragpp::compiled would
// compile them again (detail/compiled.hpp).
template <Analyzer A>
class BM25Index {
public:
    using analyzer_type = A;
    /// What search takes per call (index/options.hpp); a plain SearchOptions converts.
    using search_options = BM25SearchOptions;

    BM25Index() requires std::default_initializable<A> = default;
    explicit BM25Index(BM25Params params, A analyzer = A{}) : analyzer_(std::move(analyzer)) { set_params(params); }
    explicit BM25Index(A analyzer, BM25Params params = {}) : analyzer_(std::move(analyzer)) { set_params(params); }

    // --- configuration --------------------------------------------------------------

    [[nodiscard]] const BM25Params& params() const noexcept { return params_; }
    /// Changes the variant and the default parameters; no re-indexing is needed.
    /// Throws InvalidArgument (nothing changes) for a parameter out of its domain.
    void set_params(const BM25Params& p) {
        check_params(p.k1, p.b, p.delta, "BM25Params");
        if (!(p.epsilon >= 0.0) || !std::isfinite(p.epsilon))
            throw InvalidArgument("BM25Params: epsilon is " + std::to_string(p.epsilon) + " (must be finite and >= 0)");
        check_field_weights(p.field_weights, "BM25Params");
        if (!(p.field_b >= 0.0 && p.field_b <= 1.0))
            throw InvalidArgument("BM25Params: field_b is " + std::to_string(p.field_b) + " (must be in [0, 1])");
        params_ = p;
    }
    [[nodiscard]] const A& analyzer() const noexcept { return analyzer_; }

    // --- updates ----------------------------------------------------------------------

    /// Indexes the analyzed `doc.text` under `id` (a DocumentAnalyzer's analyze_document
    /// and analyze_field: each document may be analysed its own way). Throws DuplicateError when `id` is
    /// already indexed; nothing changes then (nor when the analyzer throws).
    /// A document with metadata fields (bm25_document_fields) also gets its title,
    /// heading path and source path indexed as BM25F fields.
    void add_document(DocId id, const Document& doc) {
        check_absent(id);
        std::vector<std::string> terms;
        ragpp::analyze_document(analyzer_, doc, terms);
        const auto fields = analyze_fields(doc);
        add_terms(id, terms);
        add_field_terms(id, fields);
    }
    /// Indexes `doc` under the next free id (one past the largest id ever used), returned.
    DocId add_document(const Document& doc) {
        const DocId id = next_id();
        add_document(id, doc);
        return id;
    }
    /// Indexes already-analyzed terms under `id` (the analyzer is not called).
    /// Throws DuplicateError when `id` is already indexed; nothing changes then.
    void add_terms(DocId id, std::span<const std::string> terms);

    /// Removes document `id`. Throws NotFoundError when it is not indexed; nothing
    /// changes then. There is no forward index (it would cost 1 to 3 bytes a posting):
    /// the document's terms are found through the postings, each list asked for the
    /// block that may hold `id` (its header only, for most lists), until the frequencies
    /// found add up to the document's length. Cost: O(vocabulary) block look-ups plus
    /// one block decoded and re-encoded per term of the document (see docs/bm25.md).
    void remove_document(DocId id);

    /// Removes document `id` whose content is `doc`, the document that was indexed (as a
    /// Retriever's store holds it): its terms are found by analysing `doc` again, so only
    /// their posting lists are read (one block each), instead of every list of the
    /// vocabulary (remove_document(id) reads each list's block headers: 0.27 s on a
    /// 1M-document index). When `doc` is not what was indexed (a term absent, or the
    /// frequencies not adding up to the indexed length), nothing is trusted and
    /// remove_document(id) runs. Same errors as remove_document(id).
    void remove_document(DocId id, const Document& doc);

    /// Removes the documents `ids` at once (a batch taken back after a failure, the chunks
    /// of a re-indexed file). Each posting list holding one of them is rewritten once and
    /// its skyline rebuilt once, so the cost is proportional to the postings of the lists
    /// the documents occur in (once per batch), where removing them one by one costs up to
    /// (documents x list length): 400,000 sections of one file sharing their path terms.
    /// `docs` (optional; the indexed documents, in the order of `ids`) lets only their
    /// terms' lists be read; without them, or when they are not what was indexed, every
    /// list of the vocabulary is checked as well. Throws NotFoundError for an id not indexed
    /// and InvalidArgument for an id given twice or docs of another size; nothing changes
    /// then, nor when memory runs out (the new lists are built aside, then swapped in).
    void remove_documents(std::span<const DocId> ids, std::span<const Document* const> docs = {});

    /// Replaces document `id` by `doc` (remove, then add). Throws NotFoundError when
    /// `id` is not indexed; nothing changes then (nor when the analyzer throws).
    void update_document(DocId id, const Document& doc);

    /// Compresses the uncompressed tails of the posting lists (fewer than 128 postings
    /// each, the last ones added) into blocks and releases spare capacity (after a bulk
    /// build; an index read from a file is compact already).
    void shrink_to_fit();

    // --- search -----------------------------------------------------------------------

    /// The k best documents for `query`, best first, ties by smaller id. k1, b and
    /// delta come from `options` when set, else from params(). Only documents in
    /// `options.allowed` are scored. Throws InvalidArgument for a parameter out of range.
    /// With fielded documents, the query's title keys (bm25_title_key) are added to its terms.
    [[nodiscard]] std::vector<Hit> search(std::string_view query, std::size_t k, const BM25SearchOptions& options = {}) const {
        return search_terms(query_terms(query, options.statistics.get()), k, options);
    }
    /// The same, scoring every matching document (the oracle of the pruned search).
    [[nodiscard]] std::vector<Hit> search_exhaustive(std::string_view query, std::size_t k,
                                                     const BM25SearchOptions& options = {}) const {
        return search_terms(query_terms(query, options.statistics.get()), k, options, BM25Strategy::exhaustive);
    }
    /// The terms `search` looks up for `query`: the analyzer's (a DocumentAnalyzer's
    /// analyze_query, knowing the terms of live documents' texts: of the reader's
    /// documents when `reader` is given, so that what the query means does not depend on
    /// documents the reader cannot read), then, when the index holds fielded documents,
    /// the title keys of the whole query and of each identifier-like
    /// whitespace-separated token (each distinct key once).
    [[nodiscard]] std::vector<std::string> query_terms(std::string_view query,
                                                       const ReaderStatistics* reader = nullptr) const;
    /// The same for already-analyzed query terms.
    [[nodiscard]] std::vector<Hit> search_terms(std::span<const std::string> query_terms, std::size_t k,
                                                const BM25SearchOptions& options = {},
                                                BM25Strategy strategy = BM25Strategy::automatic,
                                                BM25SearchStats* stats = nullptr) const;

    // --- statistics -------------------------------------------------------------------

    /// Live documents.
    [[nodiscard]] std::size_t size() const noexcept { return live_count_; }
    /// Live documents with at least one metadata field term (see "Fields").
    [[nodiscard]] std::size_t fielded_size() const noexcept { return fielded_docs_; }
    /// The number of terms of field `field` (0 title, 1 headings, 2 path) of document `id`.
    [[nodiscard]] std::uint32_t field_length(std::size_t field, DocId id) const noexcept {
        if (field >= fields_.size() || !contains(id)) return 0;
        if (frozen_) return id < frozen_->fields[field].len.size() ? frozen_->fields[field].len[id] : 0;
        return fields_[field].length(id);
    }
    /// The frequency of `term` in field `field` (0 title, 1 headings, 2 path) of `id`.
    [[nodiscard]] std::uint32_t field_term_frequency(std::size_t field, std::string_view term, DocId id) const;
    [[nodiscard]] bool contains(DocId id) const noexcept { return id < live_flags().size() && live_flags()[id] != 0; }
    /// One past the largest id ever indexed.
    [[nodiscard]] DocId next_id() const noexcept { return static_cast<DocId>(live_flags().size()); }
    /// The number of terms of document `id` (0 when absent).
    [[nodiscard]] std::uint32_t document_length(DocId id) const noexcept { return contains(id) ? lengths()[id] : 0; }
    [[nodiscard]] double average_length() const noexcept {
        return live_count_ == 0 ? 0.0 : static_cast<double>(total_len_) / static_cast<double>(live_count_);
    }
    [[nodiscard]] std::uint64_t total_length() const noexcept { return total_len_; }
    /// Documents containing `term` (an index term, i.e. already analyzed).
    [[nodiscard]] std::size_t document_frequency(std::string_view term) const;
    /// The statistics of the live documents of `documents` (see ReaderStatistics): their
    /// count, body and field lengths, and for the rank_bm25_okapi variant the mean idf of
    /// their vocabulary. Give them to BM25SearchOptions::statistics, and a search scores
    /// exactly as an index holding only those documents would (document frequencies are
    /// then counted over them the first time a query holds the term, O(df), and kept:
    /// O(1) afterwards). O(slots) and 4 bytes per vocabulary term, plus O(postings) for
    /// rank_bm25_okapi (which counts every term's at once). Make it once per reader and
    /// index state: it does not follow later updates.
    [[nodiscard]] ReaderStatistics reader_statistics(std::shared_ptr<const DocSet> documents) const;

    /// Whether some document of `allowed` contains `term` (an index term); stops at the
    /// first block holding one.
    [[nodiscard]] bool occurs_in(std::string_view term, const DocSet& allowed) const {
        const auto id = find_term(term);
        if (id == dict_.npos) return false;
        auto readable = [&](DocId d) { return allowed.test(d); };
        return frozen_ ? frozen_->body(id).postings.any_doc(readable) : terms_[id].postings.any_doc(readable);
    }
    /// Documents of `allowed` containing `term` (an index term): what a reader who may
    /// read only those documents counts. O(df): the term's postings are read.
    [[nodiscard]] std::size_t document_frequency(std::string_view term, const DocSet& allowed) const;
    /// The same for the documents of `reader` (see ReaderStatistics): counted the first
    /// time (O(df)), then read from the statistics' cache (O(1)).
    [[nodiscard]] std::size_t document_frequency(std::string_view term, const ReaderStatistics& reader) const {
        const auto id = find_term(term);
        return id == dict_.npos ? 0 : reader_df(id, reader);
    }
    /// The idf of `term` (an index term) as the index's variant weighs it in an
    /// unfielded search: bm25_idf(params().variant, size(), document_frequency(term)),
    /// with rank_bm25_okapi's negative idf floored to epsilon times the mean idf; 0 for a
    /// term no live document contains. (A fielded search counts df over every field.)
    [[nodiscard]] double idf(std::string_view term) const {
        const std::size_t df = document_frequency(term);
        return df == 0 ? 0.0 : variant_idf(static_cast<double>(live_count_), static_cast<double>(df));
    }
    /// The idf of `term` for a reader (see ReaderStatistics): its document frequency among
    /// the reader's documents (O(df) the first time, then kept) and their count; 0 when
    /// none of them holds it.
    [[nodiscard]] double idf(std::string_view term, const ReaderStatistics& reader) const {
        const auto id = find_term(term);
        if (id == dict_.npos) return 0.0;
        const std::size_t df = reader_df(id, reader);
        return df == 0 ? 0.0 : variant_idf(reader.count, static_cast<double>(df), &reader);
    }
    /// The frequency of `term` in document `id` (0 when absent).
    [[nodiscard]] std::uint32_t term_frequency(std::string_view term, DocId id) const;
    /// Distinct terms present in at least one live document.
    [[nodiscard]] std::size_t vocabulary_size() const noexcept {
        if (frozen_) {
            std::size_t n = 0;
            for (std::uint32_t t = 0; t < frozen_->nterms; ++t) n += frozen_->df(t) != 0 ? 1 : 0;
            return n;
        }
        return static_cast<std::size_t>(
            std::count_if(terms_.begin(), terms_.end(), [](const detail::bm25::BlockTermData& t) { return !t.postings.empty(); }));
    }
    /// (document, term) pairs.
    [[nodiscard]] std::uint64_t posting_count() const noexcept { return posting_count_; }
    /// Bytes held by the index (capacities of its arrays; the term dictionary estimated).
    /// A frozen index (loaded, not written to since) counts the bytes of a read file and
    /// its per-term flags, not a mapped file's pages (see mapped_bytes()).
    [[nodiscard]] std::size_t memory_bytes() const noexcept;

    // --- persistence ------------------------------------------------------------------
    //
    // The file is a ragpp index file (detail/binary_file.hpp: magic "RAGPPIDX", format id
    // "BM25INDX", version, payload size, checksum) whose payload is laid out in
    // index/detail/bm25_file.hpp to be used in place. Files of an older format are refused
    // (FormatError: "... was written by an older ragpp (BM25 index format 4 ...); rebuild the index").

    /// The format id and version this build writes and reads.
    static constexpr detail::BinaryFormat file_format = detail::bm25::file_format;
    static constexpr std::uint32_t file_version = file_format.version;

    /// Writes the index to `path` (through a temporary file and a rename), streamed
    /// through detail::BinaryWriter's buffer: the file is never whole in memory.
    /// Throws IoError naming the file.
    void save(const std::filesystem::path& path) const {
        detail::BinaryWriter w(path);
        detail::bm25::Codec::write(*this, w);
        w.save(path, file_format);
    }

    /// The index in the file format of `save` (the same bytes).
    [[nodiscard]] std::string to_bytes() const;

    /// Reads an index saved by `save`. The index is "frozen": it answers from the file's
    /// bytes in place (read into memory, or with `open.mmap` the mapped pages, so opening
    /// costs a check of the sizes and memory follows what queries touch); its first write
    /// (add, remove, update) decodes the file into memory first, as a read load did before
    /// (docs/bm25.md "Persistence"). A mapped file must not change while the index is
    /// alive (ragpp replaces files by rename; see OpenOptions).
    /// Throws IoError when the file cannot be read, and FormatError naming the file and
    /// what is wrong when it is not a BM25 index file, was written by another version of
    /// ragpp, is truncated or corrupted, and InvalidArgument when it was built with another
    /// analyzer than `analyzer` (as VectorIndex::load does for another embedder). With
    /// `open.verify` (the default) everything is checked at open; without it, the sizes,
    /// and each term's postings when a query first reads them (FormatError then).
    [[nodiscard]] static BM25Index load(const std::filesystem::path& path, A analyzer = A{}, OpenOptions open = {}) {
        auto fz = std::make_shared<detail::bm25::FrozenIndex>();
        fz->file = std::make_shared<const detail::FileBytes>(path, open.mmap);
        std::string_view bytes = fz->file->view();
        if (reinterpret_cast<std::uintptr_t>(bytes.data()) % 8 != 0) {  // (a read buffer is; never a mapping)
            fz->copy.assign(bytes);
            bytes = fz->copy;
        }
        return detail::bm25::Codec::open<BM25Index>(std::move(fz), bytes, path.string(), std::move(analyzer), open.verify);
    }

    /// Reads an index from the bytes of a file written by `save` (or `to_bytes`), copied
    /// and checked whole; `source` names them in error messages. Throws FormatError as `load` does.
    [[nodiscard]] static BM25Index from_bytes(std::string_view bytes, std::string_view source = "<memory>",
                                              A analyzer = A{});

    /// Whether the index still answers from a loaded file (no write since load).
    [[nodiscard]] bool frozen() const noexcept { return frozen_ != nullptr; }
    /// Whether it answers from a memory-mapped file.
    [[nodiscard]] bool mapped() const noexcept { return frozen_ && frozen_->file && frozen_->file->mapped(); }

private:
    /// Erases `id` (of length `len`) from one term's list; its tf (0 when absent). The
    /// skyline is rebuilt when the removed posting was one of its points.
    template <class TermData>
    std::uint32_t erase_posting(TermData& td, DocId id, std::uint32_t len) {
        const std::uint32_t tf = td.postings.erase(id, doc_len_.data());
        if (tf == 0) return 0;
        auto sp = std::lower_bound(td.skyline.begin(), td.skyline.end(), tf,
                                   [](const detail::bm25::SkyPoint& q, std::uint32_t v) { return q.tf < v; });
        if (sp != td.skyline.end() && sp->tf == tf && sp->len == len) rebuild_skyline(td);
        return tf;
    }
    /// The bookkeeping of a removal once the body postings are gone.
    void finish_removal(DocId id, std::uint32_t len, std::size_t distinct) {
        remove_field_terms(id);
        doc_len_[id] = 0;
        live_[id] = 0;
        --live_count_;
        total_len_ -= len;
        posting_count_ -= distinct;
        ++generation_;
    }

    friend struct detail::bm25::Codec;

    // The document tables, from memory or from the loaded file (frozen).
    [[nodiscard]] std::span<const std::uint32_t> lengths() const noexcept {
        return frozen_ ? frozen_->len : std::span<const std::uint32_t>(doc_len_);
    }
    [[nodiscard]] std::span<const std::uint8_t> live_flags() const noexcept {
        return frozen_ ? frozen_->live : std::span<const std::uint8_t>(live_);
    }
    /// The id of an index term (TermDict::npos when absent).
    [[nodiscard]] std::uint32_t find_term(std::string_view term) const {
        return frozen_ ? frozen_->find(term) : dict_.find(term);
    }

    /// Copy-on-write: a frozen index decodes the file into memory before its first write
    /// (everything checked first, as OpenOptions::verify does; all or nothing: the new
    /// state is built aside, then swapped in). Term ids stay the file's.
    void thaw();
    using Plan = detail::bm25::Plan;
    using FieldedPlan = detail::bm25::FieldedPlan;

    using FieldTerms = std::array<std::vector<std::string>, 3>;

    [[nodiscard]] FieldTerms analyze_fields(const Document& doc) const {
        FieldTerms out;
        const auto texts = bm25_document_fields(doc);
        for (std::size_t f = 0; f < 3; ++f)
            if (!texts[f].empty()) ragpp::analyze_field(analyzer_, doc, texts[f], out[f]);
        if (auto key = bm25_title_key(texts[0]); !key.empty()) out[0].push_back(std::move(key));
        return out;
    }

    /// Indexes the field terms of a document just added by add_terms.
    void add_field_terms(DocId id, const FieldTerms& fields);

    void remove_field_terms(DocId id);

    static void check_field_weights(const FieldWeights& w, const char* where) {
        auto check = [&](const char* field, double v) {
            if (!std::isfinite(v) || v < 0.0)
                throw InvalidArgument(std::string(where) + ": field weight " + field + " is " + std::to_string(v) +
                                      " (must be finite and >= 0)");
        };
        check("title", w.title);
        check("headings", w.headings);
        check("path", w.path);
    }

    static void check_params(double k1, double b, double delta, const char* where) {
        auto bad = [&](const char* field, double v, const char* domain) {
            return InvalidArgument(std::string(where) + ": " + field + " is " + std::to_string(v) + " (must be " + domain + ")");
        };
        if (!std::isfinite(k1) || k1 < 0.0) throw bad("k1", k1, "finite and >= 0");
        if (!(b >= 0.0 && b <= 1.0)) throw bad("b", b, "in [0, 1]");
        if (!std::isfinite(delta) || delta < 0.0) throw bad("delta", delta, "finite and >= 0");
    }

    void check_absent(DocId id) const {
        if (contains(id)) throw DuplicateError("BM25Index: DocId " + std::to_string(id) + " is already indexed");
    }

    [[nodiscard]] bool scores_every_document() const noexcept {
        return params_.variant == BM25Variant::rank_bm25_l || params_.variant == BM25Variant::rank_bm25_plus;
    }

    static auto lower_bound(std::vector<detail::bm25::Posting>& pl, DocId id) {
        return std::lower_bound(pl.begin(), pl.end(), id, [](const detail::bm25::Posting& p, DocId d) { return p.doc < d; });
    }

    std::uint32_t intern(std::string_view term) { return intern(term, detail::bm25::TermDict::hash(term)); }
    std::uint32_t intern(std::string_view term, std::uint64_t hash) {
        const std::uint32_t id = dict_.intern(term, hash);
        if (id == terms_.size()) terms_.emplace_back();
        return id;
    }

    void rebuild_skyline(detail::bm25::BlockTermData& td) const;

    /// rank_bm25's mean idf over terms of document frequencies `dfs` (non-zero) among n
    /// documents, summed by increasing df.
    [[nodiscard]] static double okapi_mean_of(std::vector<std::size_t> dfs, double n) {
        std::sort(dfs.begin(), dfs.end());
        double sum = 0.0;
        const std::size_t count = dfs.size();
        for (std::size_t i = 0; i < count;) {
            std::size_t j = i;
            while (j < count && dfs[j] == dfs[i]) ++j;
            sum += static_cast<double>(j - i) * bm25_idf(BM25Variant::rank_bm25_okapi, n, static_cast<double>(dfs[i]));
            i = j;
        }
        return count == 0 ? 0.0 : sum / static_cast<double>(count);
    }

    [[nodiscard]] double okapi_mean_idf() const;

    /// The body document frequency of term `id` among `reader`'s documents: cached, or
    /// counted over its postings (`postings`, or the index's list) and cached.
    template <class Postings = detail::bm25::PostingList>
    [[nodiscard]] std::size_t reader_df(std::size_t id, const ReaderStatistics& reader,
                                        const Postings* postings = nullptr) const;
    /// The idf of the index's variant for n live documents and document frequency df
    /// (rank_bm25_okapi: a negative idf becomes epsilon times the mean idf).
    [[nodiscard]] double variant_idf(double n, double df, const ReaderStatistics* reader = nullptr) const {
        const double idf = bm25_idf(params_.variant, n, df);
        if (params_.variant != BM25Variant::rank_bm25_okapi || idf >= 0.0) return idf;
        return params_.epsilon * (reader ? reader->okapi_mean_idf : okapi_mean_idf());
    }

    /// The distinct known query terms, in order of first occurrence, with their weights.
    /// A frozen index's lists are views over the file, kept in `views` (as long as the plan).
    [[nodiscard]] std::vector<detail::bm25::QueryTerm> resolve(std::span<const std::string> query_terms, double k1,
                                                               double delta,
                                                               std::vector<detail::bm25::BlockTermData>& views,
                                                               const ReaderStatistics* reader = nullptr) const;

    // --- fielded search (BM25F, see "Fields") -------------------------------------------

    [[nodiscard]] std::vector<Hit> search_fielded(const Plan& base, const FieldWeights& fw,
                                                  std::span<const std::string> query_terms, std::size_t k,
                                                  BM25Strategy strategy, BM25SearchStats* stats,
                                                  const ReaderStatistics* reader = nullptr) const;

    template <BM25Variant V>
    [[nodiscard]] std::vector<Hit> run_fielded(const FieldedPlan& plan, std::size_t k, bool prune,
                                               BM25SearchStats* stats) const {
        detail::TopK top(k, live_flags().size());
        const std::size_t scored =
            prune ? detail::bm25::maxscore_fielded<V>(plan, top) : detail::bm25::exhaustive<V>(plan, top, k);
        if (stats) *stats = {scored, prune ? BM25Algorithm::maxscore : BM25Algorithm::exhaustive};
        return top.take_sorted();
    }

    /// `automatic` accumulates only up to this many document slots (1 MiB of
    /// accumulators): beyond, allocating and clearing them costs more than MaxScore.
    static constexpr std::size_t accumulate_max_slots = std::size_t{1} << 17;

    /// MaxScore needs non-negative term weights and no score for non-matching
    /// documents; accumulation needs a zero absent-term part (the per-document sum must
    /// skip absent terms to equal the document-at-a-time sum bit for bit) and no score
    /// for non-matching documents. Accumulation wins when the query's lists cover a
    /// good part of a collection small enough for its accumulators to stay in cache
    /// (its cost is the postings plus one slot per document).
    [[nodiscard]] BM25Algorithm choose(const Plan& plan, BM25Strategy strategy) const;

    template <BM25Variant V>
    [[nodiscard]] std::vector<Hit> run(const Plan& plan, std::size_t k, BM25Algorithm algorithm,
                                       BM25SearchStats* stats) const {
        detail::TopK top(k, live_flags().size());
        std::size_t scored = 0;
        switch (algorithm) {
            case BM25Algorithm::exhaustive: scored = detail::bm25::exhaustive<V>(plan, top, k); break;
            case BM25Algorithm::accumulate: scored = detail::bm25::accumulate<V>(plan, top); break;
            case BM25Algorithm::maxscore: scored = detail::bm25::maxscore<V>(plan, top); break;
        }
        if (stats) *stats = {scored, algorithm};
        return top.take_sorted();
    }

    A analyzer_{};
    BM25Params params_{};
    detail::bm25::TermDict dict_;
    std::vector<detail::bm25::BlockTermData> terms_;  // by term id; no forward index (see remove_document)
    std::vector<std::uint32_t> doc_len_;             // by DocId; 0 for absent slots
    std::vector<std::uint8_t> live_;                 // by DocId
    std::size_t live_count_ = 0;
    std::uint64_t total_len_ = 0;
    std::uint64_t posting_count_ = 0;
    std::uint64_t generation_ = 0;
    mutable detail::bm25::MeanIdfCache okapi_cache_;
    std::array<detail::bm25::FieldData, 3> fields_;  // title, headings, path (empty without fielded documents)
    std::size_t fielded_docs_ = 0;                   // live documents with a field term
    // Set while frozen (loaded, not written to since): the file's arrays, used in place
    // instead of dict_, terms_, doc_len_, live_ and fields_ (empty then); see thaw().
    std::shared_ptr<const detail::bm25::FrozenIndex> frozen_;
};

template <Analyzer A>
std::vector<Hit> BM25Index<A>::search_terms(std::span<const std::string> query_terms, std::size_t k,
                                            const BM25SearchOptions& options,
                                            BM25Strategy strategy,
                                            BM25SearchStats* stats) const {
    const double k1 = options.k1.value_or(params_.k1);
    const double b = options.b.value_or(params_.b);
    const double delta = options.delta.value_or(params_.delta);
    check_params(k1, b, delta, "BM25SearchOptions");
    if (stats) *stats = {};
    // The reader's statistics when given (see ReaderStatistics), else the index's.
    const ReaderStatistics* reader = options.statistics.get();
    const double n_docs = reader ? reader->count : static_cast<double>(live_count_);
    const double total = reader ? reader->total_length : static_cast<double>(total_len_);
    if (k == 0 || n_docs == 0 || total == 0) return {};
    Plan plan;
    plan.k1 = k1;
    plan.b = b;
    plan.delta = delta;
    plan.avgdl = total / n_docs;
    plan.one_minus_b = 1.0 - b;
    plan.b_over_avgdl = b / plan.avgdl;
    plan.allowed = options.allowed.get();
    const auto lens = lengths();
    const auto live = live_flags();
    plan.doc_len = &lens;
    plan.live = &live;
    plan.all = scores_every_document();
    const FieldWeights fw = options.field_weights.value_or(params_.field_weights);
    check_field_weights(fw, "BM25SearchOptions");
    if (fielded_docs_ > 0 && (fw.title > 0.0 || fw.headings > 0.0 || fw.path > 0.0))
        return search_fielded(plan, fw, query_terms, k, strategy, stats, reader);
    std::vector<detail::bm25::BlockTermData> views;  // a frozen index's lists (resolve)
    plan.terms = resolve(query_terms, k1, delta, views, reader);
    if (plan.terms.empty()) return {};
    const BM25Algorithm algorithm = choose(plan, strategy);
    return visit_bm25_variant(params_.variant, [&](auto v) { return run<decltype(v)::value>(plan, k, algorithm, stats); });
}

template <Analyzer A>
std::vector<Hit> BM25Index<A>::search_fielded(const Plan& base, const FieldWeights& fw,
                                              std::span<const std::string> query_terms, std::size_t k,
                                              BM25Strategy strategy, BM25SearchStats* stats,
                                              const ReaderStatistics* reader) const {
    FieldedPlan plan;
    plan.k1 = base.k1;
    plan.delta = base.delta;
    plan.allowed = base.allowed;
    plan.doc_len = base.doc_len;
    plan.live = base.live;
    plan.all = base.all;
    plan.w = {1.0, fw.title, fw.headings, fw.path};
    plan.one_minus_b[0] = base.one_minus_b;
    plan.b_over_avg[0] = base.b_over_avgdl;
    for (std::size_t f = 1; f < 4; ++f) {
        const auto& fd = fields_[f - 1];
        const double total = reader   ? reader->field_total[f - 1]
                             : frozen_ ? static_cast<double>(frozen_->fields[f - 1].total)
                                       : static_cast<double>(fd.total);
        const double docs = reader   ? reader->field_documents[f - 1]
                            : frozen_ ? static_cast<double>(frozen_->fields[f - 1].docs)
                                      : static_cast<double>(fd.docs);
        const double avg = docs == 0 ? 1.0 : total / docs;
        plan.field_len[f - 1] = frozen_ ? frozen_->fields[f - 1].len : std::span<const std::uint32_t>(fd.len);
        plan.one_minus_b[f] = 1.0 - params_.field_b;
        plan.b_over_avg[f] = params_.field_b / avg;
    }
    // The distinct query terms known in any field, in order of first occurrence.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> counts;  // term id, qtf
    for (const auto& t : query_terms) {
        const auto tid = find_term(t);
        if (tid == dict_.npos) continue;
        auto c = std::find_if(counts.begin(), counts.end(), [&](const auto& x) { return x.first == tid; });
        if (c == counts.end()) counts.emplace_back(tid, 1);
        else ++c->second;
    }
    const auto n = reader ? reader->count : static_cast<double>(live_count_);
    const double absent = bm25_tf_part_absent(params_.variant, plan.k1, plan.delta);
    // The body lists of the query terms, decoded (a fielded search reads them whole to
    // count df anyway); the fields' lists are not compressed.
    // (A frozen index's field lists are views over the file, with copies of their skylines.)
    std::vector<detail::bm25::TermData> bodies(counts.size());
    std::vector<detail::bm25::ListView> field_views;
    field_views.reserve(3 * counts.size());  // (no reallocation: the terms point into it)
    for (std::size_t c = 0; c < counts.size(); ++c) {
        const auto td = frozen_ ? frozen_->body(counts[c].first) : detail::bm25::BlockTermData{};
        const auto& body = frozen_ ? td : terms_[counts[c].first];
        bodies[c].postings = body.postings.decode();
        bodies[c].skyline = body.skyline;
    }
    for (std::size_t c = 0; c < counts.size(); ++c) {
        const auto [tid, qtf] = counts[c];
        std::array<const detail::bm25::Posting*, 4> cur{}, end{};  // each field's list (null when absent)
        std::array<const std::vector<detail::bm25::SkyPoint>*, 4> sky{};
        if (!bodies[c].postings.empty()) {
            cur[0] = bodies[c].postings.data();
            end[0] = cur[0] + bodies[c].postings.size();
            sky[0] = &bodies[c].skyline;
        }
        for (std::size_t f = 1; f < 4; ++f) {
            if (frozen_) {
                field_views.push_back(frozen_->field_list(f - 1, tid));
                if (field_views.back().begin == field_views.back().end) continue;
                cur[f] = field_views.back().begin;
                end[f] = field_views.back().end;
                sky[f] = &field_views.back().skyline;
            } else if (const auto* td = fields_[f - 1].term(tid)) {
                cur[f] = td->postings.data();
                end[f] = cur[f] + td->postings.size();
                sky[f] = &td->skyline;
            }
        }
        const auto begin = cur;
        // df: documents with the term in any field (a merge of the lists).
        std::size_t df = 0;
        for (;;) {
            DocId d = std::numeric_limits<DocId>::max();
            bool any = false;
            for (std::size_t f = 0; f < 4; ++f)
                if (cur[f] != end[f] && cur[f]->doc <= d) {
                    d = cur[f]->doc;
                    any = true;
                }
            if (!any) break;
            if (!reader || reader->documents->test(d)) ++df;  // the reader's df
            for (std::size_t f = 0; f < 4; ++f)
                if (cur[f] != end[f] && cur[f]->doc == d) ++cur[f];
        }
        if (df == 0) continue;
        detail::bm25::FieldedTerm ft;
        bool read = false;
        for (std::size_t f = 0; f < 4; ++f) {
            if (sky[f] == nullptr || plan.w[f] <= 0.0) continue;  // a field of weight 0 is not read
            ft.begin[f] = begin[f];
            ft.end[f] = end[f];
            ft.skyline[f] = sky[f];
            read = true;
        }
        if (!read) continue;
        const double idf = variant_idf(n, static_cast<double>(df), reader);
        ft.weight = static_cast<double>(qtf) * idf;
        ft.zero = ft.weight * absent;
        plan.terms.push_back(ft);
    }
    if (plan.terms.empty()) return {};
    const bool all = scores_every_document();
    const bool nonnegative = std::all_of(plan.terms.begin(), plan.terms.end(),
                                         [](const detail::bm25::FieldedTerm& t) { return t.weight >= 0.0; });
    const bool prune = !all && nonnegative &&
                       (strategy == BM25Strategy::automatic || strategy == BM25Strategy::maxscore);
    return visit_bm25_variant(params_.variant,
                              [&](auto v) { return run_fielded<decltype(v)::value>(plan, k, prune, stats); });
}

template <Analyzer A>
void BM25Index<A>::thaw() {
    if (!frozen_) return;
    const auto& f = *frozen_;
    detail::bm25::Codec::verify_all(f);
    detail::bm25::TermDict dict;
    std::vector<detail::bm25::BlockTermData> terms(f.nterms);
    std::array<detail::bm25::FieldData, 3> fields;
    for (std::uint32_t id = 0; id < f.nterms; ++id) {
        const auto name = f.term_name(id);
        (void)dict.intern(name, detail::bm25::TermDict::hash(name));  // id: verify_all found each name at its id
        auto view = f.body(id);
        const auto blocks = view.postings.blocks();
        const auto e = f.entry(id);
        terms[id].postings.adopt(std::vector<std::uint8_t>(blocks.begin(), blocks.end()), e.df, e.last_doc, e.last_count);
        terms[id].skyline = std::move(view.skyline);
        terms[id].front = view.front;
    }
    for (std::size_t fi = 0; fi < 3; ++fi) {
        const auto& ff = f.fields[fi];
        if (ff.nterms == 0) continue;
        auto& fd = fields[fi];
        fd.terms.resize(f.nterms);
        fd.len.assign(ff.len.begin(), ff.len.end());
        fd.fwd.assign(f.slots, {});
        fd.total = ff.total;
        fd.docs = static_cast<std::size_t>(ff.docs);
        std::vector<std::uint32_t> prev(f.slots, 0);
        for (std::size_t i = 0; i < ff.nterms; ++i) {  // by increasing term id: each document's ids sorted
            const auto tid = detail::bm25::load_at<detail::bm25::FieldEntry>(ff.entries, i).tid;
            auto v = f.field_list(fi, tid);
            auto& td = fd.terms[tid];
            td.postings.assign(v.begin, v.end);
            td.skyline = std::move(v.skyline);
            if (!td.skyline.empty()) td.front = td.skyline.front();
            for (const auto& p : td.postings) {
                detail::bm25::put_varint(fd.fwd[p.doc], tid - prev[p.doc]);
                prev[p.doc] = tid;
            }
        }
    }
    std::vector<std::uint8_t> live(f.live.begin(), f.live.end());
    std::vector<std::uint32_t> lens(f.len.begin(), f.len.end());
    dict_ = std::move(dict);
    terms_ = std::move(terms);
    doc_len_ = std::move(lens);
    live_ = std::move(live);
    fields_ = std::move(fields);
    frozen_.reset();
    ++generation_;
}

template <Analyzer A>
void BM25Index<A>::add_terms(DocId id, std::span<const std::string> terms) {
    check_absent(id);
    if (terms.size() > std::numeric_limits<std::uint32_t>::max())
        throw InvalidArgument("BM25Index: document " + std::to_string(id) + " has more than 2^32-1 terms");
    thaw();
    // Hash every term first and prefetch its dictionary slot, so the lookups of a
    // document overlap their cache misses instead of waiting for each in turn.
    std::vector<std::uint64_t> hashes(terms.size());
    for (std::size_t i = 0; i < terms.size(); ++i) {
        hashes[i] = detail::bm25::TermDict::hash(terms[i]);
        dict_.prefetch(hashes[i]);
    }
    std::vector<std::uint32_t> ids;
    ids.reserve(terms.size());
    for (std::size_t i = 0; i < terms.size(); ++i) ids.push_back(intern(terms[i], hashes[i]));
    std::sort(ids.begin(), ids.end());
    std::vector<detail::bm25::Posting> unique;  // (term id, tf)
    unique.reserve(ids.size());
    for (std::size_t i = 0; i < ids.size();) {
        std::size_t j = i + 1;
        while (j < ids.size() && ids[j] == ids[i]) ++j;
        unique.push_back({ids[i], static_cast<std::uint32_t>(j - i)});
        i = j;
    }
    const std::size_t slots = std::max(doc_len_.size(), std::size_t{id} + 1);
    doc_len_.resize(slots, 0);
    live_.resize(slots, 0);
    const auto len = static_cast<std::uint32_t>(terms.size());
    doc_len_[id] = len;  // before the postings: a block records its documents' minimum length
    const std::size_t distinct = unique.size();
    for (std::size_t i = 0; i < distinct; ++i) {
        // Prefetch the term record 8 terms ahead, then its list's tail 4 terms ahead.
        if (i + 8 < distinct) detail::bm25::prefetch(&terms_[unique[i + 8].doc]);
        if (i + 4 < distinct) {
            const auto& ahead = terms_[unique[i + 4].doc].postings;
            if (!ahead.empty()) detail::bm25::prefetch(ahead.tail_bytes());
        }
        auto& td = terms_[unique[i].doc];
        td.postings.add({id, unique[i].tf}, doc_len_.data());
        td.add_point({unique[i].tf, len});
    }
    live_[id] = 1;
    ++live_count_;
    total_len_ += len;
    posting_count_ += distinct;
    ++generation_;
}

template <Analyzer A>
void BM25Index<A>::remove_document(DocId id) {
    if (!contains(id))
        throw NotFoundError("BM25Index::remove_document: no document with DocId " + std::to_string(id));
    thaw();
    const std::uint32_t len = doc_len_[id];
    std::size_t distinct = 0;
    std::uint64_t found = 0;
    for (std::size_t t = 0; t < terms_.size() && found < len; ++t) {
        auto& td = terms_[t];
        if (td.postings.empty() || td.postings.last_doc() < id) continue;
        const std::uint32_t tf = erase_posting(td, id, len);
        if (tf == 0) continue;
        found += tf;
        ++distinct;
    }
    finish_removal(id, len, distinct);
}

template <Analyzer A>
void BM25Index<A>::remove_document(DocId id, const Document& doc) {
    if (!contains(id))
        throw NotFoundError("BM25Index::remove_document: no document with DocId " + std::to_string(id));
    std::vector<std::string> terms;
    ragpp::analyze_document(analyzer_, doc, terms);
    thaw();
    const std::uint32_t len = doc_len_[id];
    std::vector<std::uint32_t> tids;
    tids.reserve(terms.size());
    for (const auto& t : terms) {
        const std::uint32_t tid = dict_.find(t);
        if (tid == detail::bm25::TermDict::npos) return remove_document(id);
        tids.push_back(tid);
    }
    std::sort(tids.begin(), tids.end());
    tids.erase(std::unique(tids.begin(), tids.end()), tids.end());
    std::uint64_t sum = 0;
    for (const std::uint32_t tid : tids) {
        const std::uint32_t tf = terms_[tid].postings.find(id);
        if (tf == 0) return remove_document(id);
        sum += tf;
    }
    if (sum != len) return remove_document(id);
    for (const std::uint32_t tid : tids) (void)erase_posting(terms_[tid], id, len);
    finish_removal(id, len, tids.size());
}

template <Analyzer A>
void BM25Index<A>::remove_documents(std::span<const DocId> ids, std::span<const Document* const> docs) {
    if (!docs.empty() && docs.size() != ids.size())
        throw InvalidArgument("BM25Index::remove_documents: " + std::to_string(docs.size()) + " documents for " +
                              std::to_string(ids.size()) + " ids");
    std::vector<DocId> sorted(ids.begin(), ids.end());
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i) {
        if (!contains(sorted[i]))
            throw NotFoundError("BM25Index::remove_documents: no document with DocId " + std::to_string(sorted[i]));
        if (i > 0 && sorted[i] == sorted[i - 1])
            throw InvalidArgument("BM25Index::remove_documents: DocId " + std::to_string(sorted[i]) + " given twice");
    }
    if (sorted.empty()) return;
    // The candidate lists: the terms of `docs` (when each is known to the index).
    std::vector<std::uint32_t> candidates;
    bool every_list = docs.empty();
    if (!every_list) {
        std::vector<std::string> terms;
        for (const Document* d : docs) {
            terms.clear();
            ragpp::analyze_document(analyzer_, *d, terms);
            for (const auto& t : terms) {
                const auto tid = find_term(t);
                if (tid == dict_.npos) every_list = true;
                else candidates.push_back(tid);
            }
        }
        std::sort(candidates.begin(), candidates.end());
        candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    }
    thaw();
    const std::uint32_t* lens = doc_len_.data();
    auto gone_pos = [&](DocId d) {  // the position of d in `sorted`, or sorted.size()
        const auto it = std::lower_bound(sorted.begin(), sorted.end(), d);
        return it != sorted.end() && *it == d ? static_cast<std::size_t>(it - sorted.begin()) : sorted.size();
    };
    // Body lists, rebuilt aside: (term id, new list and skyline).
    std::vector<std::uint64_t> found(sorted.size(), 0);  // the tfs removed, per document
    std::vector<std::pair<std::uint32_t, detail::bm25::BlockTermData>> rebuilt;
    std::vector<std::uint32_t> emptied;  // lists that lose every posting (nothing kept aside)
    std::vector<char> visited;
    std::size_t removed_postings = 0;
    auto filter_body = [&](std::uint32_t tid) {
        const auto& td = terms_[tid];
        if (td.postings.empty() || td.postings.last_doc() < sorted.front()) return;
        std::vector<detail::bm25::Posting> kept;
        bool any = false;
        td.postings.for_each([&](DocId d, std::uint32_t tf) {
            const auto at = gone_pos(d);
            if (at == sorted.size()) {
                kept.push_back({d, tf});
            } else {
                found[at] += tf;
                any = true;
            }
        });
        if (!any) return;
        removed_postings += td.postings.size() - kept.size();
        if (kept.empty()) {
            emptied.push_back(tid);
            return;
        }
        detail::bm25::BlockTermData fresh;
        for (const auto& p : kept) {
            fresh.postings.add(p, lens);
            fresh.add_point({p.tf, lens[p.doc]});
        }
        rebuilt.emplace_back(tid, std::move(fresh));
    };
    for (const auto tid : candidates) filter_body(tid);
    bool complete = true;
    for (std::size_t i = 0; i < sorted.size(); ++i) complete = complete && found[i] == doc_len_[sorted[i]];
    if (every_list || !complete) {  // the other lists too
        visited.assign(terms_.size(), 0);
        for (const auto tid : candidates) visited[tid] = 1;
        for (std::uint32_t tid = 0; tid < terms_.size(); ++tid)
            if (!visited[tid]) filter_body(tid);
    }
    // Field lists: the terms each document's forward list names.
    std::array<std::vector<std::pair<std::uint32_t, detail::bm25::TermData>>, 3> field_rebuilt;
    for (std::size_t f = 0; f < 3; ++f) {
        auto& fd = fields_[f];
        std::vector<std::uint32_t> touched;
        for (const DocId id : sorted)
            if (fd.length(id) > 0)
                detail::bm25::for_each_varint_delta(fd.fwd[id], [&](std::uint32_t t) { touched.push_back(t); });
        std::sort(touched.begin(), touched.end());
        touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
        for (const auto t : touched) {
            detail::bm25::TermData fresh;
            for (const auto& p : fd.terms[t].postings)
                if (gone_pos(p.doc) == sorted.size()) fresh.postings.push_back(p);
            for (const auto& p : fresh.postings) fresh.add_point({p.tf, fd.len[p.doc]});
            field_rebuilt[f].emplace_back(t, std::move(fresh));
        }
    }
    // Swap in (no allocation from here on).
    for (auto& [tid, td] : rebuilt) terms_[tid] = std::move(td);
    for (const auto tid : emptied) terms_[tid] = detail::bm25::BlockTermData{};
    for (std::size_t f = 0; f < 3; ++f) {
        auto& fd = fields_[f];
        for (auto& [t, td] : field_rebuilt[f]) fd.terms[t] = std::move(td);
    }
    for (const DocId id : sorted) {
        bool any = false;
        for (auto& fd : fields_) {
            const std::uint32_t flen = fd.length(id);
            if (flen == 0) continue;
            any = true;
            std::vector<std::uint8_t>().swap(fd.fwd[id]);
            fd.len[id] = 0;
            fd.total -= flen;
            --fd.docs;
        }
        if (any) --fielded_docs_;
        total_len_ -= doc_len_[id];
        doc_len_[id] = 0;
        live_[id] = 0;
        --live_count_;
    }
    posting_count_ -= removed_postings;
    ++generation_;
}

template <Analyzer A>
void BM25Index<A>::update_document(DocId id, const Document& doc) {
    if (!contains(id))
        throw NotFoundError("BM25Index::update_document: no document with DocId " + std::to_string(id));
    std::vector<std::string> terms;
    ragpp::analyze_document(analyzer_, doc, terms);
    const auto fields = analyze_fields(doc);
    remove_document(id);
    add_terms(id, terms);
    add_field_terms(id, fields);
}

template <Analyzer A>
void BM25Index<A>::shrink_to_fit() {
    if (frozen_) return;  // a loaded file's lists are compact
    for (auto& td : terms_) {
        td.postings.compact(doc_len_.data());
        td.skyline.shrink_to_fit();
    }
    terms_.shrink_to_fit();
    dict_.shrink_to_fit();
    for (auto& f : fields_)
        for (auto& td : f.terms) td.postings.shrink_to_fit();
}

template <Analyzer A>
std::vector<std::string> BM25Index<A>::query_terms(std::string_view query,
                                                   const ReaderStatistics* reader) const {
    std::vector<std::string> terms;
    ragpp::analyze_query(analyzer_, query, terms, [this, reader](std::string_view t) {
        if (!reader) return document_frequency(t) > 0;
        const auto id = find_term(t);
        if (id == dict_.npos) return false;
        if (const auto df = reader->cached_df(id)) return *df > 0;
        return occurs_in(t, *reader->documents);
    });
    if (fielded_docs_ == 0) return terms;
    std::vector<std::string> keys;
    auto add = [&](std::string key) {
        if (!key.empty() && std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
    };
    detail::for_each_word(query, [&](std::string_view token) {
        if (bm25_identifier_like(token)) add(bm25_title_key(token));
    });
    add(bm25_title_key(query));
    for (auto& k : keys) terms.push_back(std::move(k));
    return terms;
}

template <Analyzer A>
ReaderStatistics BM25Index<A>::reader_statistics(std::shared_ptr<const DocSet> documents) const {
    if (!documents) throw InvalidArgument("BM25Index::reader_statistics: no document set");
    ReaderStatistics r;
    r.term_count_slots = frozen_ ? frozen_->nterms : terms_.size();
    r.term_counts = std::shared_ptr<std::atomic<std::uint32_t>[]>(new std::atomic<std::uint32_t>[r.term_count_slots]());
    const auto lens = lengths();
    const auto live = live_flags();
    std::array<std::span<const std::uint32_t>, 3> field_len;
    for (std::size_t f = 0; f < 3; ++f)
        field_len[f] = frozen_ ? frozen_->fields[f].len : std::span<const std::uint32_t>(fields_[f].len);
    for (DocId id = 0; id < live.size(); ++id) {
        if (!live[id] || !documents->test(id)) continue;
        r.count += 1;
        r.total_length += lens[id];
        for (std::size_t f = 0; f < 3; ++f)
            if (id < field_len[f].size() && field_len[f][id] > 0) {
                r.field_documents[f] += 1;
                r.field_total[f] += field_len[f][id];
            }
    }
    if (params_.variant == BM25Variant::rank_bm25_okapi) {
        std::vector<std::size_t> dfs;
        auto count = [&](std::size_t t, const auto& postings) {
            std::size_t df = 0;
            postings.for_each([&](DocId d, std::uint32_t) { df += documents->test(d) ? 1 : 0; });
            r.cache_df(t, df);
            if (df) dfs.push_back(df);
        };
        if (frozen_)
            for (std::uint32_t t = 0; t < frozen_->nterms; ++t) count(t, frozen_->body(t).postings);
        else
            for (std::size_t t = 0; t < terms_.size(); ++t) count(t, terms_[t].postings);
        r.okapi_mean_idf = okapi_mean_of(std::move(dfs), r.count);
    }
    r.documents = std::move(documents);
    return r;
}

template <Analyzer A>
std::size_t BM25Index<A>::document_frequency(std::string_view term) const {
    const auto id = find_term(term);
    if (id == dict_.npos) return 0;
    return frozen_ ? frozen_->df(id) : terms_[id].postings.size();
}

template <Analyzer A>
std::size_t BM25Index<A>::document_frequency(std::string_view term, const DocSet& allowed) const {
    const auto id = find_term(term);
    if (id == dict_.npos) return 0;
    std::size_t n = 0;
    auto count = [&](DocId d, std::uint32_t) { n += allowed.test(d) ? 1 : 0; };
    if (frozen_) frozen_->body(id).postings.for_each(count);
    else terms_[id].postings.for_each(count);
    return n;
}

template <Analyzer A>
std::uint32_t BM25Index<A>::term_frequency(std::string_view term, DocId id) const {
    const auto tid = find_term(term);
    if (tid == dict_.npos) return 0;
    return frozen_ ? frozen_->body(tid).postings.find(id) : terms_[tid].postings.find(id);
}

template <Analyzer A>
std::size_t BM25Index<A>::memory_bytes() const noexcept {
    std::size_t n = sizeof(*this);
    if (frozen_)
        return n + sizeof(*frozen_) + frozen_->nterms + frozen_->copy.size() +
               (frozen_->file && !frozen_->file->mapped() ? frozen_->file->size() : 0);
    n += (terms_.capacity() - terms_.size()) * sizeof(detail::bm25::BlockTermData);
    for (const auto& td : terms_)
        n += sizeof(td) + td.postings.memory_bytes() + td.skyline.capacity() * sizeof(detail::bm25::SkyPoint);
    n += dict_.memory_bytes();
    n += doc_len_.capacity() * sizeof(std::uint32_t) + live_.capacity();
    for (const auto& fd : fields_) {
        for (const auto& td : fd.terms)
            n += sizeof(td) + td.postings.capacity() * sizeof(detail::bm25::Posting) +
                 td.skyline.capacity() * sizeof(detail::bm25::SkyPoint);
        n += fd.len.capacity() * sizeof(std::uint32_t);
        for (const auto& f : fd.fwd) n += sizeof(f) + f.capacity();
    }
    return n;
}

template <Analyzer A>
std::string BM25Index<A>::to_bytes() const {
    detail::BinaryWriter w;
    detail::bm25::Codec::write(*this, w);
    return w.finish(file_format);
}

template <Analyzer A>
BM25Index<A> BM25Index<A>::from_bytes(std::string_view bytes, std::string_view source,
                                      A analyzer) {
    auto fz = std::make_shared<detail::bm25::FrozenIndex>();
    fz->copy.reserve(bytes.size() + 16);  // a heap buffer (8-aligned), even for a few bytes
    fz->copy.assign(bytes);
    const std::string_view copy = fz->copy;
    return detail::bm25::Codec::open<BM25Index>(std::move(fz), copy, source, std::move(analyzer), true);
}

template <Analyzer A>
void BM25Index<A>::add_field_terms(DocId id, const FieldTerms& fields) {
    bool any = false;
    for (std::size_t f = 0; f < 3; ++f) {
        const auto& terms = fields[f];
        if (terms.empty()) continue;
        if (terms.size() > std::numeric_limits<std::uint32_t>::max())
            throw InvalidArgument("BM25Index: a field of document " + std::to_string(id) + " has more than 2^32-1 terms");
        any = true;
        std::vector<std::uint32_t> ids;
        ids.reserve(terms.size());
        for (const auto& t : terms) ids.push_back(intern(t));
        std::sort(ids.begin(), ids.end());
        auto& fd = fields_[f];
        if (fd.terms.size() < terms_.size()) fd.terms.resize(terms_.size());
        const std::size_t slots = std::max(fd.len.size(), std::size_t{id} + 1);
        fd.len.resize(slots, 0);
        fd.fwd.resize(slots);
        const auto len = static_cast<std::uint32_t>(terms.size());
        std::vector<std::uint8_t> forward;
        std::uint32_t prev = 0;
        for (std::size_t i = 0; i < ids.size();) {
            std::size_t j = i + 1;
            while (j < ids.size() && ids[j] == ids[i]) ++j;
            auto& td = fd.terms[ids[i]];
            const detail::bm25::Posting p{id, static_cast<std::uint32_t>(j - i)};
            if (td.postings.empty() || td.postings.back().doc < id) td.postings.push_back(p);
            else td.postings.insert(lower_bound(td.postings, id), p);
            td.add_point({p.tf, len});
            detail::bm25::put_varint(forward, ids[i] - prev);
            prev = ids[i];
            i = j;
        }
        forward.shrink_to_fit();
        fd.fwd[id] = std::move(forward);
        fd.len[id] = len;
        fd.total += len;
        ++fd.docs;
    }
    if (any) {
        ++fielded_docs_;
        ++generation_;
    }
}

template <Analyzer A>
void BM25Index<A>::remove_field_terms(DocId id) {
    bool any = false;
    for (auto& fd : fields_) {
        const std::uint32_t len = fd.length(id);
        if (len == 0) continue;
        any = true;
        detail::bm25::for_each_varint_delta(fd.fwd[id], [&](std::uint32_t t) {
            auto& td = fd.terms[t];
            auto it = lower_bound(td.postings, id);
            const std::uint32_t tf = it->tf;
            td.postings.erase(it);
            auto sp = std::lower_bound(td.skyline.begin(), td.skyline.end(), tf,
                                       [](const detail::bm25::SkyPoint& q, std::uint32_t v) { return q.tf < v; });
            if (sp != td.skyline.end() && sp->tf == tf && sp->len == len) {
                // The point may go: rebuild from the remaining postings (this one erased).
                td.skyline.clear();
                for (const auto& p : td.postings) td.add_point({p.tf, fd.len[p.doc]});
            }
        });
        fd.fwd[id] = {};
        fd.len[id] = 0;
        fd.total -= len;
        --fd.docs;
    }
    if (any) --fielded_docs_;
}

template <Analyzer A>
void BM25Index<A>::rebuild_skyline(detail::bm25::BlockTermData& td) const {
    td.skyline.clear();
    td.postings.for_each([&](DocId d, std::uint32_t tf) { td.add_point({tf, doc_len_[d]}); });
}

template <Analyzer A>
double BM25Index<A>::okapi_mean_idf() const {
    std::lock_guard lock(okapi_cache_.mutex);
    if (!okapi_cache_.valid || okapi_cache_.generation != generation_) {
        // Summed by increasing df, so the value does not depend on term ids (an index
        // rebuilt from scratch gets the same double).
        std::vector<std::size_t> dfs;
        if (frozen_) {
            for (std::uint32_t t = 0; t < frozen_->nterms; ++t)
                if (frozen_->df(t) != 0) dfs.push_back(frozen_->df(t));
        }
        for (const auto& td : terms_)
            if (!td.postings.empty()) dfs.push_back(td.postings.size());
        okapi_cache_.value = okapi_mean_of(std::move(dfs), static_cast<double>(live_count_));
        okapi_cache_.generation = generation_;
        okapi_cache_.valid = true;
    }
    return okapi_cache_.value;
}

template <Analyzer A>
template <class Postings>
std::size_t BM25Index<A>::reader_df(std::size_t id, const ReaderStatistics& reader,
                                    const Postings* postings) const {
    if (const auto cached = reader.cached_df(id)) return *cached;
    std::size_t df = 0;
    auto count = [&](DocId d, std::uint32_t) { df += reader.documents->test(d) ? 1 : 0; };
    if (postings) postings->for_each(count);
    else if (frozen_) frozen_->body(static_cast<std::uint32_t>(id)).postings.for_each(count);
    else terms_[id].postings.for_each(count);
    reader.cache_df(id, df);
    return df;
}

template <Analyzer A>
std::vector<detail::bm25::QueryTerm> BM25Index<A>::resolve(std::span<const std::string> query_terms, double k1,
                                                           double delta,
                                                           std::vector<detail::bm25::BlockTermData>& views,
                                                           const ReaderStatistics* reader) const {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> counts;  // term id, qtf
    for (const auto& t : query_terms) {
        const auto tid = find_term(t);
        if (tid == dict_.npos || (frozen_ ? frozen_->df(tid) == 0 : terms_[tid].postings.empty())) continue;
        auto c = std::find_if(counts.begin(), counts.end(), [&](const auto& x) { return x.first == tid; });
        if (c == counts.end()) counts.emplace_back(tid, 1);
        else ++c->second;
    }
    std::vector<detail::bm25::QueryTerm> out;
    out.reserve(counts.size());
    const auto n = reader ? reader->count : static_cast<double>(live_count_);
    const double absent = bm25_tf_part_absent(params_.variant, k1, delta);
    views.reserve(counts.size());  // (no reallocation: the terms point into it)
    for (const auto& [tid, qtf] : counts) {
        if (frozen_) views.push_back(frozen_->body(tid));
        const auto& td = frozen_ ? views.back() : terms_[tid];
        // The reader's df: the term's documents it may read (a term only in others is no term).
        std::size_t df = td.postings.size();
        if (reader) {
            df = reader_df(tid, *reader, &td.postings);
            if (df == 0) {
                if (frozen_) views.pop_back();
                continue;
            }
        }
        const double idf = variant_idf(n, static_cast<double>(df), reader);
        const double weight = static_cast<double>(qtf) * idf;
        out.push_back({&td.postings, &td.skyline, weight, weight * absent});
    }
    return out;
}

template <Analyzer A>
BM25Algorithm BM25Index<A>::choose(const Plan& plan, BM25Strategy strategy) const {
    const bool all = scores_every_document();
    const bool zero_free = std::all_of(plan.terms.begin(), plan.terms.end(),
                                       [](const detail::bm25::QueryTerm& t) { return t.zero == 0.0; });
    const bool nonnegative = std::all_of(plan.terms.begin(), plan.terms.end(),
                                         [](const detail::bm25::QueryTerm& t) { return t.weight >= 0.0; });
    const bool can_accumulate = !all && zero_free;
    const bool can_prune = !all && nonnegative;
    switch (strategy) {
        case BM25Strategy::exhaustive: return BM25Algorithm::exhaustive;
        case BM25Strategy::accumulate: return can_accumulate ? BM25Algorithm::accumulate : BM25Algorithm::exhaustive;
        case BM25Strategy::maxscore: return can_prune ? BM25Algorithm::maxscore : BM25Algorithm::exhaustive;
        case BM25Strategy::automatic: break;
    }
    std::size_t postings = 0;
    for (const auto& t : plan.terms) postings += t.list->size();
    const std::size_t slots = live_flags().size();
    const bool cache_sized = slots <= accumulate_max_slots;
    if (can_accumulate && ((cache_sized && postings * 8 >= slots) || !can_prune))
        return BM25Algorithm::accumulate;
    return can_prune ? BM25Algorithm::maxscore : BM25Algorithm::exhaustive;
}

template <Analyzer A>
std::uint32_t BM25Index<A>::field_term_frequency(std::size_t field, std::string_view term, DocId id) const {
    const auto tid = find_term(term);
    if (field >= fields_.size() || tid == dict_.npos) return 0;
    if (frozen_) {
        const auto v = frozen_->field_list(field, tid);
        auto p = std::lower_bound(v.begin, v.end, id, [](const detail::bm25::Posting& x, DocId d) { return x.doc < d; });
        return p != v.end && p->doc == id ? p->tf : 0;
    }
    const auto* td = fields_[field].term(tid);
    if (td == nullptr) return 0;
    auto p = std::lower_bound(td->postings.begin(), td->postings.end(), id,
                              [](const detail::bm25::Posting& x, DocId d) { return x.doc < d; });
    return p != td->postings.end() && p->doc == id ? p->tf : 0;
}

static_assert(SearchIndex<BM25Index<WhitespaceAnalyzer>>);

}  // namespace ragpp

// A program that links ragpp::compiled (RAGPP_COMPILED, detail/compiled.hpp) finds
// BM25Index<EnglishAnalyzer>, the index of the README's program, compiled once in the
// library (src/instances.cpp), and does not instantiate it again.
#ifdef RAGPP_COMPILED
#include <ragpp/text/analyzer.hpp>
namespace ragpp {
extern template class BM25Index<EnglishAnalyzer>;
}  // namespace ragpp
#endif
#define RAGPP_DETAIL_HAS_BM25_INDEX 1
#include <ragpp/detail/readme_instances.hpp>
