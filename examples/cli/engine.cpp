// The ragpp tool's engine (see engine.hpp). This translation unit is the only one that
// instantiates the indexes, with two small type-erased policies: AnyAnalyzer and
// AnyEmbedder (type erasure at the edge, as STYLE.md asks: the library stays templated).
#include "engine.hpp"

#include "progress.hpp"

#include <ragpp/chunk/chunker.hpp>
#include <ragpp/detail/file.hpp>
#include <ragpp/embed/dispatch.hpp>
#include <ragpp/embed/embedder.hpp>
#include <ragpp/embed/hashing.hpp>
#include <ragpp/embed/model2vec.hpp>
#include <ragpp/embed/word_vectors.hpp>
#include <ragpp/filter/filter.hpp>
#include <ragpp/filter/metadata_index.hpp>
#include <ragpp/index/bm25.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/io/beir.hpp>
#include <ragpp/answer/abstain.hpp>
#include <ragpp/rerank/cross_encoder.hpp>
#include <ragpp/rerank/reranker.hpp>
#include <ragpp/rerank/soft_match.hpp>
#include <ragpp/retrieve/diversify.hpp>
#include <ragpp/text/analyzer.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <iterator>
#include <sstream>

namespace cli {

namespace {

using Clock = std::chrono::steady_clock;

// Time spent analysing and embedding by the current thread, read by evaluate() to
// split each index's time into its stages.
thread_local double analysis_seconds = 0;
thread_local double embedding_seconds = 0;

class AnyAnalyzer {
public:
    explicit AnyAnalyzer(std::string name) : name_(std::move(name)) {
        fn_ = ragpp::with_analyzer(name_, [](auto analyzer) -> Fn {
            return [analyzer](std::string_view text, std::vector<std::string>& out) { analyzer.analyze(text, out); };
        });
    }
    void analyze(std::string_view text, std::vector<std::string>& out) const {
        const auto t0 = Clock::now();
        fn_(text, out);
        analysis_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    }
    [[nodiscard]] std::string_view name() const noexcept { return name_; }

private:
    using Fn = std::function<void(std::string_view, std::vector<std::string>&)>;
    std::string name_;
    Fn fn_;
};
static_assert(ragpp::Analyzer<AnyAnalyzer>);

class AnyEmbedder {
public:
    template <ragpp::Embedder E>
    explicit AnyEmbedder(E embedder, std::string spec)
        : impl_(std::make_shared<const Model<E>>(std::move(embedder))), spec_(std::move(spec)) {}

    [[nodiscard]] std::size_t dimension() const { return impl_->dimension(); }
    [[nodiscard]] Eigen::VectorXf embed(std::string_view text, ragpp::Role role) const {
        const auto t0 = Clock::now();
        Eigen::VectorXf v = impl_->embed(text, role);
        embedding_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
        return v;
    }
    [[nodiscard]] ragpp::RowMatrixXf embed_batch(std::span<const std::string> texts, ragpp::Role role) const {
        const auto t0 = Clock::now();
        ragpp::RowMatrixXf m = impl_->embed_batch(texts, role);
        embedding_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
        return m;
    }
    [[nodiscard]] std::string name() const { return impl_->name(); }
    [[nodiscard]] const std::string& spec() const noexcept { return spec_; }

private:
    struct Concept {
        virtual ~Concept() = default;
        virtual std::size_t dimension() const = 0;
        virtual Eigen::VectorXf embed(std::string_view, ragpp::Role) const = 0;
        virtual ragpp::RowMatrixXf embed_batch(std::span<const std::string>, ragpp::Role) const = 0;
        virtual std::string name() const = 0;
    };
    template <class E>
    struct Model final : Concept {
        explicit Model(E e) : embedder(std::move(e)) {}
        std::size_t dimension() const override { return embedder.dimension(); }
        Eigen::VectorXf embed(std::string_view t, ragpp::Role r) const override { return embedder.embed(t, r); }
        ragpp::RowMatrixXf embed_batch(std::span<const std::string> t, ragpp::Role r) const override {
            return embedder.embed_batch(t, r);
        }
        std::string name() const override { return std::string(embedder.name()); }
        E embedder;
    };
    std::shared_ptr<const Concept> impl_;
    std::string spec_;
};
static_assert(ragpp::Embedder<AnyEmbedder>);

AnyEmbedder make_embedder(const EngineConfig& c) {
    const ragpp::RolePrefixes prefixes{c.query_prefix, c.passage_prefix};
    if (c.embedder.starts_with("hashing:")) {  // hashing with another dimension
        const std::string dim = c.embedder.substr(8);
        if (dim.empty() || dim.find_first_not_of("0123456789") != std::string::npos || dim.size() > 6 || std::stoul(dim) == 0)
            throw UsageError("--embedder hashing:DIM needs a positive dimension, got '" + dim + "'");
        ragpp::HashingOptions o;
        o.dimension = std::stoul(dim);
        o.prefixes = prefixes;
        return AnyEmbedder(ragpp::HashingEmbedder(o), c.embedder);
    }
    ragpp::EmbedderSettings s;
    if (!prefixes.query.empty() || !prefixes.passage.empty()) s.prefixes = prefixes;
    s.threads = c.threads;
    s.int8 = c.quantize == "int8";
    return ragpp::with_embedder(c.embedder, s, [&](auto embedder) { return AnyEmbedder(std::move(embedder), c.embedder); });
}

/// The cross-encoder `spec` (cross-encoder:DIR) names, with the threads and quantization of `c`.
std::shared_ptr<const ragpp::CrossEncoderReranker> make_cross_encoder(const EngineConfig& c, const std::string& spec) {
    check_reranker(spec);
    ragpp::CrossEncoderOptions o;
    o.threads = c.threads;
    o.quantize = c.quantize == "int8" ? ragpp::TransformerQuantization::int8 : ragpp::TransformerQuantization::none;
    return std::make_shared<const ragpp::CrossEncoderReranker>(spec.substr(14), o);
}

using Bm25 = ragpp::BM25Index<AnyAnalyzer>;
using Vectors = ragpp::VectorIndex<AnyEmbedder>;
using Hybrid = ragpp::Retriever<Bm25, Vectors>;

ragpp::BM25Params bm25_params(const EngineConfig& c) {
    ragpp::BM25Params p;
    p.variant = ragpp::parse_bm25_variant(c.variant);
    p.k1 = c.k1;
    p.b = c.b;
    p.delta = c.delta;
    return p;
}

ragpp::RetrieverOptions retriever_options(const EngineConfig& c) { return {c.rrf_k, c.weights, c.candidates}; }

// --- metadata <-> JSON ---------------------------------------------------------------
nlohmann::json metadata_json(const ragpp::Metadata& m) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [k, v] : m)
        std::visit(
            [&](const auto& x) {
                using T = std::decay_t<decltype(x)>;
                if constexpr (std::is_same_v<T, ragpp::Date>) j[k] = {{"date", x.to_string()}};
                else j[k] = x;
            },
            v);
    return j;
}

ragpp::Metadata metadata_from_json(const nlohmann::json& j, const std::string& where) {
    ragpp::Metadata m;
    if (j.is_null()) return m;
    if (!j.is_object()) throw ragpp::ParseError(where + ": field 'metadata' must be an object");
    for (const auto& [k, v] : j.items()) {
        if (v.is_string()) m[k] = v.get<std::string>();
        else if (v.is_number()) m[k] = v.get<double>();
        else if (v.is_boolean()) m[k] = std::string(v.get<bool>() ? "true" : "false");
        else if (v.is_object() && v.contains("date") && v["date"].is_string()) m[k] = ragpp::Date::parse(v["date"].get<std::string>());
        else if (v.is_array()) {
            std::vector<std::string> list;
            for (const auto& e : v) {
                if (!e.is_string()) throw ragpp::ParseError(where + ": metadata field '" + k + "' must be a list of strings");
                list.push_back(e.get<std::string>());
            }
            m[k] = std::move(list);
        } else if (!v.is_null()) {
            throw ragpp::ParseError(where + ": metadata field '" + k + "' has an unsupported type");
        }
    }
    return m;
}

using ragpp::detail::read_file;

}  // namespace

// --- options ----------------------------------------------------------------------

void declare_engine_options(ArgParser& p, bool with_chunking) {
    p.option("analyzer", "NAME", "BM25 analyzer: standard, english, french or cjk", "english");
    declare_embedder_options(p);
    p.option("variant", "NAME", "BM25 variant: lucene, robertson, atire, bm25l, bm25+, rank_bm25.BM25Okapi, ...",
             "lucene")
        .option("delta", "X", "BM25L/BM25+ delta", "0.5");
    if (with_chunking)
        p.option("max-tokens", "N", "largest chunk of a .md/.rst/.txt file, in words", "400")
            .option("overlap", "N", "words shared by consecutive parts of a long section [default: 15% of max-tokens]");
}

void declare_embedder_options(ArgParser& p) {
    p.option("embedder", "SPEC",
                "vector embedder: hashing (built in, no download), hashing:DIM, model2vec:DIR (a Model2Vec model "
                "folder), vectors:FILE (word2vec text/binary or GloVe text)",
                "hashing")
        .option("query-prefix", "TEXT", "prepended to queries before embedding; E5 models need \"query: \"", "")
        .option("passage-prefix", "TEXT", "prepended to passages before embedding; E5 models need \"passage: \"", "")
        .flag("e5", "the E5 prefixes: --query-prefix 'query: ' --passage-prefix 'passage: '")
        .option("quantize", "none|int8",
                "transformer embedders: linear layers in float32 (none) or dynamic int8 (about 2x faster, cosine >= 0.99)",
                "none");
}

void declare_threads_option(ArgParser& p) {
    p.option("threads", "N", "threads of transformer embedding and cross-encoder reranking (0: every core)", "0");
}

void declare_search_options(ArgParser& p) {
    p.option("k1", "X", "BM25 k1 (term frequency saturation)", "0.9")
        .option("b", "X", "BM25 b (length normalisation)", "0.4")
        .option("rrf-k", "X", "reciprocal rank fusion constant", "60")
        .option("weights", "W1,W2", "fusion weights of BM25 and vector search in hybrid mode", "1,1")
        .option("candidates", "N", "results each index contributes to the fusion", "100")
        .option("per-source", "N", "at most N chunks of one source file in the top k (0: no cap)", "3")
        .option("field-weights", "T,H,P",
                "BM25F weights of the title, heading path and source path fields (body 1) [default: the index's, 3,1,1]");
}

std::vector<double> parse_weights(const std::string& text, const std::string& what) {
    std::vector<double> weights;
    std::stringstream ss(text);
    for (std::string w; std::getline(ss, w, ',');) {
        char* end = nullptr;
        const double v = std::strtod(w.c_str(), &end);
        if (w.empty() || end != w.c_str() + w.size() || !(v >= 0) || !std::isfinite(v))
            throw UsageError(what + ": '" + w + "' is not a number >= 0");
        weights.push_back(v);
    }
    if (weights.size() != 2) throw UsageError(what + " needs two numbers, BM25's and the vector index's");
    return weights;
}

void apply_search_options(const ArgParser& p, EngineConfig& c) {
    c.k1 = p.number("k1");
    c.b = p.number("b");
    c.rrf_k = p.number("rrf-k");
    c.candidates = p.count("candidates");
    c.weights = parse_weights(p.get("weights"), "--weights");
    c.per_source = p.count("per-source");
    if (p.has("field-weights") && !p.get("field-weights").empty()) {
        std::vector<double> w;
        std::stringstream ss(p.get("field-weights"));
        for (std::string x; std::getline(ss, x, ',');) {
            char* end = nullptr;
            const double v = std::strtod(x.c_str(), &end);
            if (x.empty() || end != x.c_str() + x.size() || !(v >= 0) || !std::isfinite(v))
                throw UsageError("--field-weights: '" + x + "' is not a number >= 0");
            w.push_back(v);
        }
        if (w.size() != 3) throw UsageError("--field-weights needs three numbers: title, headings, path");
        c.field_weights = ragpp::FieldWeights{w[0], w[1], w[2]};
    }
}

EngineConfig engine_config(const ArgParser& p) {
    EngineConfig c;
    c.analyzer = p.get("analyzer");
    ragpp::with_analyzer(c.analyzer, [](auto) { return 0; });  // validates the name
    apply_embedder_options(p, c);
    c.variant = p.get("variant");
    (void)ragpp::parse_bm25_variant(c.variant);
    c.delta = p.number("delta");
    if (p.has("max-tokens")) {
        c.max_tokens = p.count("max-tokens");
        if (p.has("overlap")) c.overlap = p.count("overlap");
    }
    return c;
}

void apply_embedder_options(const ArgParser& p, EngineConfig& c) {
    c.embedder = p.get("embedder");
    c.quantize = p.get("quantize");
    if (c.quantize != "none" && c.quantize != "int8") throw UsageError("--quantize must be none or int8, not '" + c.quantize + "'");
    c.query_prefix = p.get("query-prefix");
    c.passage_prefix = p.get("passage-prefix");
    if (p.has("e5")) {
        if (!c.query_prefix.empty() || !c.passage_prefix.empty())
            throw UsageError("--e5 sets both prefixes: do not give --query-prefix or --passage-prefix with it");
        c.query_prefix = "query: ";
        c.passage_prefix = "passage: ";
    }
}

void declare_rerank_options(ArgParser& p) {
    p.option("rerank-candidates", "N", "fused results the reranker re-scores", "50")
        .option("rerank-weight", "X", "weight of the normalised fused score added to the reranker's", "0");
}

void apply_rerank_options(const ArgParser& p, EngineConfig& c) {
    c.rerank_candidates = p.count("rerank-candidates");
    if (c.rerank_candidates == 0) throw UsageError("--rerank-candidates must be >= 1");
    c.rerank_weight = p.number("rerank-weight");
    if (!(c.rerank_weight >= 0)) throw UsageError("--rerank-weight must be >= 0");
}

const std::string& check_reranker(const std::string& name) {
    if (name != "none" && name != "proximity" && name != "softmatch" &&
        !(name.starts_with("cross-encoder:") && name.size() > 14))
        throw UsageError("--rerank '" + name + "' is not none, proximity, softmatch or cross-encoder:DIR");
    return name;
}

PipelineSpec parse_pipeline(const std::string& spec) {
    const auto colon = spec.find(':');
    PipelineSpec p{parse_mode(spec.substr(0, colon)), {}};
    if (colon != std::string::npos) {
        if (p.mode != Mode::hybrid) throw UsageError("--mode '" + spec + "': only hybrid takes weights (hybrid:W1,W2)");
        p.weights = parse_weights(spec.substr(colon + 1), "--mode " + spec);
    }
    return p;
}

Mode parse_mode(const std::string& name) {
    if (name == "bm25") return Mode::bm25;
    if (name == "vector") return Mode::vector;
    if (name == "hybrid") return Mode::hybrid;
    throw UsageError("--mode '" + name + "' is not bm25, vector or hybrid");
}
Mode default_mode(const EngineConfig& c) { return c.embedder.rfind("hashing", 0) == 0 ? Mode::bm25 : Mode::hybrid; }
Mode parse_mode_or_default(const std::string& name, const EngineConfig& c) {
    return name.empty() ? default_mode(c) : parse_mode(name);
}
std::string mode_name(Mode m) { return m == Mode::bm25 ? "bm25" : m == Mode::vector ? "vector" : "hybrid"; }

ragpp::RowMatrixXf embed_texts(const EngineConfig& config, const std::vector<std::string>& texts, ragpp::Role role,
                               bool progress) {
    const AnyEmbedder embedder = make_embedder(config);
    ragpp::RowMatrixXf out(static_cast<Eigen::Index>(texts.size()), static_cast<Eigen::Index>(embedder.dimension()));
    Progress bar("embedding", texts.size(), progress);
    constexpr std::size_t slice = 256;
    for (std::size_t i = 0; i < texts.size(); i += slice) {
        const std::size_t n = std::min(slice, texts.size() - i);
        out.middleRows(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(n)) =
            embedder.embed_batch(std::span<const std::string>(texts.data() + i, n), role);
        bar.tick(n);
    }
    bar.finish();
    return out;
}

std::vector<double> rerank_texts(const EngineConfig& config, const std::string& query,
                                 const std::vector<std::string>& passages) {
    const auto reranker = make_cross_encoder(config, config.reranker);
    const std::vector<std::string_view> views(passages.begin(), passages.end());
    return (*reranker)(query, views);
}

std::string citation(const ragpp::Document& doc) {
    std::string out = doc.id;
    if (auto it = doc.metadata.find("heading_path"); it != doc.metadata.end())
        if (const auto* path = std::get_if<std::vector<std::string>>(&it->second); path && !path->empty()) {
            out += "  ";
            for (std::size_t i = 0; i < path->size(); ++i) out += (i ? " > " : "") + (*path)[i];
        }
    return out;
}

// --- corpus -------------------------------------------------------------------------

std::vector<ragpp::Document> load_corpus(const std::filesystem::path& corpus, const EngineConfig& config, bool progress) {
    namespace fs = std::filesystem;
    std::vector<ragpp::Document> docs;
    auto beir_doc = [](ragpp::BeirDocument d) {
        ragpp::Document doc{std::move(d.id), d.title.empty() ? std::move(d.text) : d.title + "\n" + d.text, {}};
        if (!d.title.empty()) doc.metadata["title"] = std::move(d.title);
        return doc;
    };
    if (fs::is_directory(corpus) && fs::exists(corpus / "corpus.jsonl")) {
        for (auto& d : ragpp::read_beir_corpus(corpus / "corpus.jsonl")) docs.push_back(beir_doc(std::move(d)));
        return docs;
    }
    if (fs::is_directory(corpus)) {
        std::vector<fs::path> files;
        for (const auto& e : fs::recursive_directory_iterator(corpus)) {
            if (!e.is_regular_file()) continue;
            const auto ext = e.path().extension().string();
            if (ext == ".md" || ext == ".markdown" || ext == ".rst" || ext == ".txt") files.push_back(e.path());
        }
        std::sort(files.begin(), files.end());
        if (files.empty()) throw ragpp::NotFoundError("no .md, .rst or .txt file under '" + corpus.string() + "'");
        ragpp::ChunkOptions chunking;
        chunking.max_tokens = config.max_tokens;
        chunking.overlap = config.overlap;
        chunking.validate("ragpp");
        Progress bar("chunking", files.size(), progress);
        for (const auto& f : files) {
            const ragpp::Document source{fs::relative(f, corpus).generic_string(), read_file(f), {}};
            // The raw offset lets the evidence quote the raw span, not the context line.
            for (const auto& chunk : ragpp::chunk_document(source, chunking))
                docs.push_back(ragpp::document_with_raw_offset(chunk));
            bar.tick();
        }
        return docs;
    }
    if (corpus.extension() == ".jsonl") {
        std::set<std::string> seen;
        ragpp::detail::for_each_jsonl(corpus, [&](const nlohmann::json& j, std::size_t line) {
            const std::string where = corpus.string() + ":" + std::to_string(line);
            const char* id_field = j.contains("_id") ? "_id" : "id";
            ragpp::BeirDocument d{ragpp::detail::json_string_field(j, id_field, corpus, line, true),
                                  ragpp::detail::json_string_field(j, "title", corpus, line, false),
                                  ragpp::detail::json_string_field(j, "text", corpus, line, true)};
            if (!seen.insert(d.id).second) throw ragpp::DuplicateError(where + ": duplicate id '" + d.id + "'");
            auto doc = beir_doc(std::move(d));
            if (auto it = j.find("metadata"); it != j.end())
                for (auto& [k, v] : metadata_from_json(*it, where)) doc.metadata[k] = std::move(v);
            docs.push_back(std::move(doc));
        });
        return docs;
    }
    throw ragpp::NotFoundError("corpus '" + corpus.string() +
                               "' is neither a folder (of .md/.rst/.txt files, or BEIR) nor a .jsonl file");
}

// --- the engine -----------------------------------------------------------------------

struct Engine::Impl {
    EngineConfig config;
    Hybrid retriever;
    ragpp::MetadataIndex metadata;

    // Rerankers (issue 8). Their term weights read the BM25 index of this Impl, which
    // never moves (it lives in a shared_ptr).
    std::optional<ragpp::ProximityReranker<AnyAnalyzer>> proximity;
    std::optional<ragpp::SoftMatchReranker<AnyEmbedder, AnyAnalyzer>> soft;
    // Cross-encoders, loaded on first use (one per folder).
    mutable std::mutex cross_mutex;
    mutable std::map<std::string, std::shared_ptr<const ragpp::CrossEncoderReranker>> cross;

    Impl(EngineConfig c, Hybrid r) : config(std::move(c)), retriever(std::move(r)) {
        // Lucene's idf of a BM25 term: ln(1 + (N - df + 0.5) / (df + 0.5)).
        auto idf = [this](std::string_view term) {
            const auto n = static_cast<double>(retriever.size());
            const auto df = static_cast<double>(retriever.index<0>().document_frequency(term));
            return std::log(1.0 + (n - df + 0.5) / (df + 0.5));
        };
        proximity.emplace(AnyAnalyzer(config.analyzer), ragpp::ProximityOptions{}, idf);
        // Hashing vectors compare word forms, so the BM25 analyzer's terms suit them; word
        // vectors and Model2Vec know surface words: the standard analyzer.
        const bool surface = config.embedder.rfind("hashing", 0) != 0;
        soft.emplace(retriever.index<1>().embedder(), AnyAnalyzer(surface ? "standard" : config.analyzer),
                     ragpp::SoftMatchOptions{}, [this, idf](std::string_view term) {
                         std::vector<std::string> terms;
                         retriever.index<0>().analyzer().analyze(term, terms);
                         double w = 0;
                         for (const auto& t : terms) w = std::max(w, idf(t));
                         return w;
                     });
    }

    std::vector<ragpp::Result> rerank(const std::string& reranker, std::string_view query,
                                      std::vector<ragpp::Result> fused, std::size_t keep) const {
        const ragpp::RerankOptions o{config.rerank_candidates, std::max<std::size_t>(keep, 1), config.rerank_weight};
        if (reranker == "proximity") return ragpp::rerank(query, std::move(fused), *proximity, o);
        if (reranker == "softmatch") return ragpp::rerank(query, std::move(fused), *soft, o);
        if (reranker.starts_with("cross-encoder:")) return ragpp::rerank(query, std::move(fused), *cross_encoder(reranker), o);
        check_reranker(reranker);
        if (fused.size() > keep) fused.resize(keep);
        return fused;
    }

    std::shared_ptr<const ragpp::CrossEncoderReranker> cross_encoder(const std::string& spec) const {
        std::lock_guard lock(cross_mutex);
        auto& slot = cross[spec];
        if (!slot) slot = make_cross_encoder(config, spec);
        return slot;
    }

    void index_metadata() {
        for (ragpp::DocId id = 0; id < retriever.store().capacity(); ++id)
            if (auto d = retriever.document(id)) metadata.add_document(id, d->metadata);
    }

    ragpp::SearchOptions options(Mode mode) const {
        ragpp::SearchOptions o;
        o.k1 = config.k1;
        o.b = config.b;
        o.rrf_k = config.rrf_k;
        o.candidates = config.candidates;
        o.field_weights = config.field_weights;
        o.weights = mode == Mode::bm25 ? std::vector<double>{1.0, 0.0}
                    : mode == Mode::vector ? std::vector<double>{0.0, 1.0}
                                           : config.weights;
        return o;
    }
};

Engine Engine::build(std::vector<ragpp::Document> docs, EngineConfig config, bool progress) {
    Hybrid r(retriever_options(config), Bm25(AnyAnalyzer(config.analyzer), bm25_params(config)),
             Vectors(make_embedder(config)));
    auto impl = std::make_shared<Impl>(std::move(config), std::move(r));
    // Slices of 256 documents: an embedder that batches (a transformer) gets whole
    // batches for its threads, and the progress bar still moves.
    Progress bar("indexing", docs.size(), progress);
    constexpr std::size_t slice = 256;
    for (std::size_t i = 0; i < docs.size(); i += slice) {
        const std::size_t n = std::min(slice, docs.size() - i);
        impl->retriever.add_documents(std::vector<ragpp::Document>(std::make_move_iterator(docs.begin() + static_cast<std::ptrdiff_t>(i)),
                                                                   std::make_move_iterator(docs.begin() + static_cast<std::ptrdiff_t>(i + n))));
        bar.tick(n);
    }
    bar.finish();
    impl->index_metadata();
    return Engine(std::move(impl));
}

void Engine::save(const std::filesystem::path& dir) const {
    namespace fs = std::filesystem;
    fs::create_directories(dir);
    const auto& c = impl_->config;
    nlohmann::json m{{"format", "ragpp-index"},
                     {"version", 1},
                     {"analyzer", c.analyzer},
                     {"embedder", c.embedder},
                     {"query_prefix", c.query_prefix},
                     {"passage_prefix", c.passage_prefix},
                     {"quantize", c.quantize},
                     {"variant", c.variant},
                     {"delta", c.delta},
                     {"max_tokens", c.max_tokens},
                     {"documents", impl_->retriever.size()}};
    if (c.overlap) m["overlap"] = *c.overlap;
    {
        std::ofstream out(dir / "documents.jsonl.tmp", std::ios::binary);
        for (ragpp::DocId id = 0; id < impl_->retriever.store().capacity(); ++id)
            if (auto d = impl_->retriever.document(id))
                out << nlohmann::json{{"docid", id}, {"id", d->id}, {"text", d->text}, {"metadata", metadata_json(d->metadata)}}
                           .dump()
                    << '\n';
        if (!out) throw ragpp::IoError("cannot write '" + (dir / "documents.jsonl.tmp").string() + "'");
    }
    fs::rename(dir / "documents.jsonl.tmp", dir / "documents.jsonl");
    impl_->retriever.index<0>().save(dir / "bm25.idx");
    impl_->retriever.index<1>().save(dir / "vector.idx");
    {
        std::ofstream out(dir / "manifest.json.tmp");
        out << m.dump(2) << '\n';
        if (!out) throw ragpp::IoError("cannot write '" + (dir / "manifest.json.tmp").string() + "'");
    }
    fs::rename(dir / "manifest.json.tmp", dir / "manifest.json");
}

Engine Engine::load(const std::filesystem::path& dir, std::size_t threads) {
    const auto manifest_path = dir / "manifest.json";
    nlohmann::json m;
    try {
        m = nlohmann::json::parse(read_file(manifest_path));
    } catch (const nlohmann::json::exception& e) {
        throw ragpp::FormatError("'" + manifest_path.string() + "' is not a ragpp index manifest: " + e.what());
    }
    if (m.value("format", "") != "ragpp-index" || m.value("version", 0) != 1)
        throw ragpp::FormatError("'" + manifest_path.string() + "' is not a version 1 ragpp index manifest");
    EngineConfig c;
    c.threads = threads;
    try {
        c.analyzer = m.at("analyzer").get<std::string>();
        c.embedder = m.at("embedder").get<std::string>();
        c.query_prefix = m.at("query_prefix").get<std::string>();
        c.passage_prefix = m.at("passage_prefix").get<std::string>();
        c.quantize = m.value("quantize", std::string("none"));
        c.variant = m.at("variant").get<std::string>();
        c.delta = m.at("delta").get<double>();
        c.max_tokens = m.at("max_tokens").get<std::size_t>();
        if (m.contains("overlap")) c.overlap = m["overlap"].get<std::size_t>();
    } catch (const nlohmann::json::exception& e) {
        throw ragpp::FormatError("'" + manifest_path.string() + "': " + e.what());
    }
    ragpp::DocumentStore store;
    const auto docs_path = dir / "documents.jsonl";
    ragpp::detail::for_each_jsonl(docs_path, [&](const nlohmann::json& j, std::size_t line) {
        const std::string where = docs_path.string() + ":" + std::to_string(line);
        if (!j.contains("docid") || !j["docid"].is_number_unsigned())
            throw ragpp::FormatError(where + ": field 'docid' is missing");
        store.insert(j["docid"].get<ragpp::DocId>(),
                     ragpp::Document{ragpp::detail::json_string_field(j, "id", docs_path, line, true),
                                     ragpp::detail::json_string_field(j, "text", docs_path, line, true),
                                     metadata_from_json(j.value("metadata", nlohmann::json()), where)});
    });
    auto bm25 = Bm25::load(dir / "bm25.idx", AnyAnalyzer(c.analyzer));
    auto vectors = Vectors::load(dir / "vector.idx", make_embedder(c));
    auto impl = std::make_shared<Impl>(c, Hybrid(std::move(store), retriever_options(c), std::move(bm25), std::move(vectors)));
    impl->index_metadata();
    return Engine(std::move(impl));
}

const EngineConfig& Engine::config() const { return impl_->config; }
EngineConfig& Engine::config() { return impl_->config; }
std::size_t Engine::size() const { return impl_->retriever.size(); }

std::vector<ragpp::Result> Engine::search(const std::string& query, std::size_t k, Mode mode, const std::string& filter) const {
    // A query without any term (empty, or only punctuation or stop words) would give
    // BM25 nothing and vector search the neighbours of an empty text: refuse it.
    std::vector<std::string> terms;
    impl_->retriever.index<0>().analyzer().analyze(query, terms);
    if (terms.empty() && (mode != Mode::vector || query.find_first_not_of(" \t\r\n") == std::string::npos))
        throw UsageError("the query \"" + query + "\" has no searchable term (it is empty, or only punctuation or stop words)");
    auto o = impl_->options(mode);
    if (!filter.empty()) o.allowed = std::make_shared<const ragpp::DocSet>(impl_->metadata.compile(ragpp::parse_filter(filter)));
    const std::size_t per_source = impl_->config.per_source;
    if (per_source == 0) return impl_->retriever.search(query, k, o);
    // Source diversity: fetch a longer list, move chunks over the cap down, keep k.
    auto results = ragpp::cap_per_source(impl_->retriever.search(query, std::max(k, impl_->config.candidates), o), per_source, k);
    if (results.size() > k) results.resize(k);
    return results;
}

std::vector<ragpp::Result> Engine::search(const std::string& query, std::size_t k, Mode mode, const std::string& filter,
                                          const std::string& reranker) const {
    if (reranker == "none") return search(query, k, mode, filter);
    return impl_->rerank(reranker, query, search(query, std::max(k, impl_->config.rerank_candidates), mode, filter), k);
}

ragpp::ProximityBreakdown Engine::explain(const std::string& question, const ragpp::Document& doc) const {
    return impl_->proximity->explain(question, doc.text);
}

// The tool's index keeps no Collection (the library's engine will, with
// ragpp::collection_neighbours): the chunks of each source, by metadata "position", are
// gathered once per call of neighbours() (once per `ragpp ask`).
ragpp::NeighbourFn Engine::neighbours() const {
    using Chunks = std::map<double, std::shared_ptr<const ragpp::Document>>;
    auto sources = std::make_shared<std::map<std::string, Chunks, std::less<>>>();
    auto place = [](const ragpp::Document& d) -> std::optional<std::pair<std::string, double>> {
        const auto s = d.metadata.find("source");
        const auto p = d.metadata.find("position");
        if (s == d.metadata.end() || p == d.metadata.end()) return std::nullopt;
        const auto* source = std::get_if<std::string>(&s->second);
        const auto* position = std::get_if<double>(&p->second);
        if (!source || !position) return std::nullopt;
        return std::pair{*source, *position};
    };
    for (ragpp::DocId id = 0; id < impl_->retriever.store().capacity(); ++id)
        if (auto d = impl_->retriever.document(id))
            if (auto at = place(*d)) (*sources)[at->first][at->second] = std::move(d);
    return [sources, place](const ragpp::Document& chunk, std::size_t radius) {
        std::vector<std::shared_ptr<const ragpp::Document>> out;
        const auto at = place(chunk);
        const auto it = at ? sources->find(at->first) : sources->end();
        if (it == sources->end()) return out;
        const double r = static_cast<double>(radius);
        for (auto c = it->second.lower_bound(at->second - r); c != it->second.end() && c->first <= at->second + r; ++c)
            out.push_back(c->second);
        return out;
    };
}

ragpp::PipelineReport Engine::evaluate(const ragpp::QuestionSet& questions, Mode mode, const std::string& name,
                                       bool progress) const {
    return evaluate(questions, mode, name, progress, "none", nullptr, {});
}

ragpp::PipelineReport Engine::evaluate(const ragpp::QuestionSet& questions, Mode mode, const std::string& name,
                                       bool progress, const std::string& reranker, std::vector<double>* confidences,
                                       const std::vector<double>& weights) const {
    check_reranker(reranker);
    if (confidences) confidences->clear();
    auto o = impl_->options(mode);
    if (mode == Mode::hybrid && !weights.empty()) o.weights = weights;
    const std::size_t all = impl_->config.candidates * 2;
    Progress bar("evaluating " + name, questions.size(), progress);
    auto report = ragpp::evaluate(
        name, questions,
        [&](std::string_view q, ragpp::StageTimes& times) {
            analysis_seconds = 0;
            embedding_seconds = 0;
            ragpp::SearchTimings t;
            auto results = impl_->retriever.search(q, all, o, t);
            const auto tc = Clock::now();
            const std::size_t listed = results.size();
            results = ragpp::cap_per_source(std::move(results), impl_->config.per_source, listed);
            const double capping = std::chrono::duration<double>(Clock::now() - tc).count();
            if (mode != Mode::vector) {
                times.emplace_back("analysis", analysis_seconds);
                times.emplace_back("bm25", t.index_seconds[0] - analysis_seconds);
            }
            if (mode != Mode::bm25) {
                times.emplace_back("embedding", embedding_seconds);
                times.emplace_back("vector", t.index_seconds[1] - embedding_seconds);
            }
            times.emplace_back("fusion", t.fusion_seconds + capping);
            if (reranker != "none") {
                const auto t0 = Clock::now();
                const std::size_t n = results.size();
                results = impl_->rerank(reranker, q, std::move(results), n);
                times.emplace_back("rerank", std::chrono::duration<double>(Clock::now() - t0).count());
            }
            if (confidences) confidences->push_back(ragpp::confidence(ragpp::confidence_signals(results)));
            std::vector<ragpp::Retrieved> out;
            out.reserve(results.size());
            for (const auto& r : results) out.push_back({r.document->id, r.score});
            return out;
        },
        [&](std::size_t, std::size_t) { bar.tick(); });
    bar.finish();
    return report;
}

std::vector<std::string> Engine::unmatched_labels(const ragpp::QuestionSet& questions) const {
    std::set<std::string> labels;
    for (const auto& q : questions)
        for (const auto& [label, grade] : q.relevant) labels.insert(label);
    std::vector<std::string> keys;
    for (ragpp::DocId id = 0; id < impl_->retriever.store().capacity(); ++id)
        if (auto d = impl_->retriever.document(id)) keys.push_back(d->id);
    std::sort(keys.begin(), keys.end());
    std::vector<std::string> missing;
    for (const auto& label : labels) {
        // Every key a label matches starts with the label: look from its lower bound.
        auto it = std::lower_bound(keys.begin(), keys.end(), label);
        bool found = false;
        for (; it != keys.end() && it->compare(0, label.size(), label) == 0; ++it)
            if (ragpp::label_matches(label, *it)) {
                found = true;
                break;
            }
        if (!found) missing.push_back(label);
    }
    return missing;
}

}  // namespace cli
