// Tests of embed/transformer.hpp and rerank/cross_encoder.hpp against the torch
// reference fixtures of tests/fixtures/transformer/ (scripts/gen_transformer_fixtures.py:
// random tiny BERT / XLM-R models in the Hugging Face layout, vectors and logits from a
// forward pass written in plain torch ops). RAGPP_TRANSFORMER_FIXTURES overrides the
// folder (to test freshly generated fixtures).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <ragpp/embed/transformer.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/rerank/cross_encoder.hpp>

#include "support.hpp"

namespace fs = std::filesystem;
using ragpp::Role;
using ragpp::RowMatrixXf;
using ragpp::TransformerEmbedder;
using ragpp::TransformerEmbedderOptions;
using Ids = std::vector<ragpp::HfTokenizer::TokenId>;

namespace {

fs::path fixtures() {
    if (const char* env = std::getenv("RAGPP_TRANSFORMER_FIXTURES")) return env;
    return fs::path(RAGPP_SOURCE_DIR) / "tests" / "fixtures" / "transformer";
}
fs::path fixture(const std::string& name) {
    const fs::path p = fixtures() / name;
    REQUIRE(fs::exists(p / "expected.json"));
    return p;
}
nlohmann::json expected(const fs::path& dir) { return nlohmann::json::parse(ragpp_test::read_file(dir / "expected.json")); }

std::vector<Ids> ids_of(const nlohmann::json& j) {
    std::vector<Ids> out;
    for (const auto& s : j) out.push_back(s.get<Ids>());
    return out;
}
RowMatrixXf matrix_of(const nlohmann::json& j) {
    RowMatrixXf m(static_cast<Eigen::Index>(j.size()), static_cast<Eigen::Index>(j[0].size()));
    for (std::size_t i = 0; i < j.size(); ++i)
        for (std::size_t k = 0; k < j[i].size(); ++k) m(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k)) = j[i][k].get<float>();
    return m;
}
double max_abs_diff(const RowMatrixXf& a, const RowMatrixXf& b) {
    REQUIRE(a.rows() == b.rows());
    REQUIRE(a.cols() == b.cols());
    return static_cast<double>((a - b).cwiseAbs().maxCoeff());
}
void report(const std::string& what, double diff) { std::printf("  %-44s max abs diff %.3g\n", what.c_str(), diff); }

TransformerEmbedderOptions no_prompts() {
    TransformerEmbedderOptions o;
    o.prefixes = ragpp::RolePrefixes{};
    return o;
}

const char* embedder_folders[] = {"bert-mean", "bert-cls-f16", "bert-max-bf16", "bert-sqrtlen", "xlmr-mean"};

// --- safetensors surgery for the bad-input tests ----------------------------------------

struct RawSafetensors {
    nlohmann::json header;
    std::string data;

    static RawSafetensors read(const fs::path& p) {
        const std::string bytes = ragpp_test::read_file(p);
        std::uint64_t n = 0;
        std::memcpy(&n, bytes.data(), 8);
        return {nlohmann::json::parse(bytes.substr(8, n)), bytes.substr(8 + n)};
    }
    void write(const fs::path& p) const {
        const std::string h = header.dump();
        const std::uint64_t n = h.size();
        std::ofstream out(p, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(&n), 8);
        out << h << data;
    }
};

/// A copy of fixture `name` in a temp folder.
struct BrokenCopy {
    ragpp_test::TempDir tmp;
    fs::path dir;
    explicit BrokenCopy(const std::string& name) : dir(tmp.path / name) {
        fs::copy(fixture(name), dir, fs::copy_options::recursive);
    }
    nlohmann::json config() const { return nlohmann::json::parse(ragpp_test::read_file(dir / "config.json")); }
    void set_config(const nlohmann::json& j) const { std::ofstream(dir / "config.json", std::ios::trunc) << j.dump(2); }
};

template <class Ex>
void require_error(const fs::path& dir, const std::vector<std::string>& needles) {
    try {
        TransformerEmbedder e(dir);
        FAIL("no exception for a broken folder");
    } catch (const Ex& ex) {
        const std::string msg = ex.what();
        INFO(msg);
        for (const auto& n : needles) CHECK(msg.find(n) != std::string::npos);
    } catch (const ragpp::Error& ex) {
        FAIL(std::string("a ragpp::Error of another type: ") + ex.what());
    }
}

}  // namespace

// ======================================================================================
// Embedders
// ======================================================================================

TEST_CASE("transformer embedder: vectors from the fixture token ids match torch within 1e-4", "[transformer]") {
    for (const char* name : embedder_folders) {
        SECTION(name) {
            const fs::path dir = fixture(name);
            const auto exp = expected(dir);
            const TransformerEmbedder e(dir, no_prompts());
            const auto seqs = ids_of(exp["tokens"]);
            const RowMatrixXf want = matrix_of(exp["vectors"]);
            REQUIRE(e.dimension() == static_cast<std::size_t>(want.cols()));
            const double diff = max_abs_diff(e.embed_ids(seqs), want);
            report(std::string(name) + " (ids)", diff);
            CHECK(diff < 1e-4);
        }
    }
}

TEST_CASE("transformer embedder: vectors from text match torch within 1e-4, tokens identical", "[transformer]") {
    for (const char* name : embedder_folders) {
        SECTION(name) {
            const fs::path dir = fixture(name);
            const auto exp = expected(dir);
            const TransformerEmbedder e(dir, no_prompts());
            const auto texts = exp["texts"].get<std::vector<std::string>>();
            const auto seqs = ids_of(exp["tokens"]);
            for (std::size_t i = 0; i < texts.size(); ++i) {
                INFO(texts[i]);
                CHECK(e.token_ids(texts[i]) == seqs[i]);
            }
            const double diff = max_abs_diff(e.embed_batch(texts), matrix_of(exp["vectors"]));
            report(std::string(name) + " (text, embed_batch)", diff);
            CHECK(diff < 1e-4);
        }
    }
}

TEST_CASE("transformer embedder: a text in a batch gives its vector alone (1e-6)", "[transformer]") {
    for (const char* name : embedder_folders) {
        SECTION(name) {
            const fs::path dir = fixture(name);
            const auto texts = expected(dir)["texts"].get<std::vector<std::string>>();
            auto o = no_prompts();
            o.batch_size = 4;  // several batches, each with padding-free packed sequences
            const TransformerEmbedder e(dir, o);
            const RowMatrixXf batch = e.embed_batch(texts);
            double worst = 0;
            for (std::size_t i = 0; i < texts.size(); ++i) {
                const Eigen::VectorXf alone = e.embed(texts[i]);
                worst = std::max(worst, static_cast<double>((batch.row(static_cast<Eigen::Index>(i)).transpose() - alone)
                                                                .cwiseAbs()
                                                                .maxCoeff()));
            }
            report(std::string(name) + " batch vs alone", worst);
            CHECK(worst <= 1e-6);
        }
    }
}

TEST_CASE("transformer embedder: threads 1 and 2 give identical rows, progress counts every text", "[transformer]") {
    const fs::path dir = fixture("bert-mean");
    const auto texts = expected(dir)["texts"].get<std::vector<std::string>>();
    std::vector<std::string> many;
    for (int r = 0; r < 5; ++r) many.insert(many.end(), texts.begin(), texts.end());
    auto o1 = no_prompts();
    o1.threads = 1;
    o1.batch_size = 3;
    auto o2 = o1;
    o2.threads = 2;
    std::vector<std::pair<std::size_t, std::size_t>> calls;
    o2.progress = [&](std::size_t done, std::size_t total) { calls.emplace_back(done, total); };
    const RowMatrixXf a = TransformerEmbedder(dir, o1).embed_batch(many);
    const RowMatrixXf b = TransformerEmbedder(dir, o2).embed_batch(many);
    CHECK((a.array() == b.array()).all());
    REQUIRE(!calls.empty());
    CHECK(calls.size() == (many.size() + 2) / 3);
    CHECK(calls.back() == std::pair<std::size_t, std::size_t>{many.size(), many.size()});
    for (std::size_t i = 1; i < calls.size(); ++i) CHECK(calls[i].first > calls[i - 1].first);
    // Rows are in input order: the repeated texts give the same rows.
    for (std::size_t i = 0; i < many.size(); ++i)
        CHECK((a.row(static_cast<Eigen::Index>(i)).array() == a.row(static_cast<Eigen::Index>(i % texts.size())).array()).all());
}

TEST_CASE("transformer embedder: truncation at max_seq_length keeps the special tokens", "[transformer]") {
    const fs::path dir = fixture("bert-mean");
    const auto exp = expected(dir);
    const TransformerEmbedder e(dir, no_prompts());
    CHECK(e.max_seq_length() == 24);
    const auto texts = exp["texts"].get<std::vector<std::string>>();
    const auto& tok = e.tokenizer();
    const auto cls = tok.token_to_id("[CLS]"), sep = tok.token_to_id("[SEP]");
    REQUIRE(cls);
    REQUIRE(sep);
    bool saw_long = false;
    for (const auto& t : texts) {
        const auto ids = e.token_ids(t);
        CHECK(ids.size() <= 24);
        CHECK(ids.front() == *cls);
        CHECK(ids.back() == *sep);
        if (tok.encode(t).size() + 2 > 24) {
            saw_long = true;
            CHECK(ids.size() == 24);
        }
    }
    CHECK(saw_long);
    // A shorter override cuts more, and changes the long text's vector.
    auto o = no_prompts();
    o.max_seq_length = 8;
    const TransformerEmbedder short_e(dir, o);
    CHECK(short_e.token_ids(texts[2]).size() == 8);
    CHECK(short_e.name() != e.name());
    CHECK(!short_e.embed(texts[2]).isApprox(e.embed(texts[2])));
    // An override beyond the position embeddings is refused.
    o.max_seq_length = 65;
    CHECK_THROWS_AS(TransformerEmbedder(dir, o), ragpp::InvalidArgument);
}

TEST_CASE("transformer embedder: folder prompts (E5 style), explicit prefixes override them, name() shows them",
          "[transformer]") {
    const fs::path dir = fixture("bert-max-bf16");
    const auto exp = expected(dir);
    const auto texts = exp["texts"].get<std::vector<std::string>>();
    const TransformerEmbedder folder(dir);  // prompts from config_sentence_transformers.json
    CHECK(folder.prefixes().query == "query: ");
    CHECK(folder.prefixes().passage == "passage: ");
    const auto qseqs = ids_of(exp["query_tokens"]);
    for (std::size_t i = 0; i < texts.size(); ++i) CHECK(folder.token_ids(texts[i], Role::query) == qseqs[i]);
    const double dq = max_abs_diff(folder.embed_batch(texts, Role::query), matrix_of(exp["query_vectors"]));
    report("bert-max-bf16 query prompt", dq);
    CHECK(dq < 1e-4);
    // Explicit prefixes replace the folder's: none at all gives the plain vectors.
    const TransformerEmbedder none(dir, no_prompts());
    CHECK(max_abs_diff(none.embed_batch(texts, Role::query), matrix_of(exp["vectors"])) < 1e-4);
    CHECK(none.name() != folder.name());
    CHECK(folder.name().find("query: ") != std::string::npos);
    // The passage prompt is applied to passages.
    auto o = no_prompts();
    o.prefixes = ragpp::RolePrefixes{"", "passage: "};
    const TransformerEmbedder explicit_passage(dir, o);
    CHECK((folder.embed("some passage", Role::passage).array() ==
           explicit_passage.embed("some passage", Role::passage).array()).all());
    CHECK(folder.token_ids("x", Role::passage) == none.token_ids("passage: x", Role::passage));
}

TEST_CASE("transformer embedder: a vector index saved with one set of prefixes refuses another", "[transformer]") {
    const fs::path dir = fixture("bert-max-bf16");
    ragpp_test::TempDir tmp;
    const fs::path file = tmp.path / "v.idx";
    {
        ragpp::VectorIndex<TransformerEmbedder> index{TransformerEmbedder(dir)};
        index.add_document(1, ragpp::Document{"a", "the quick brown fox", {}});
        index.save(file);
    }
    CHECK_NOTHROW(ragpp::VectorIndex<TransformerEmbedder>::load(file, TransformerEmbedder(dir)));
    CHECK_THROWS_AS(ragpp::VectorIndex<TransformerEmbedder>::load(file, TransformerEmbedder(dir, no_prompts())),
                    ragpp::InvalidArgument);
}

TEST_CASE("transformer embedder: int8 vectors have cosine >= 0.99 to float32", "[transformer]") {
    for (const char* name : embedder_folders) {
        SECTION(name) {
            const fs::path dir = fixture(name);
            const auto texts = expected(dir)["texts"].get<std::vector<std::string>>();
            auto o = no_prompts();
            o.quantize = ragpp::TransformerQuantization::int8;
            const RowMatrixXf f = TransformerEmbedder(dir, no_prompts()).embed_batch(texts);
            const RowMatrixXf q = TransformerEmbedder(dir, o).embed_batch(texts);
            double worst = 1;
            for (Eigen::Index i = 0; i < f.rows(); ++i) {
                const double c = f.row(i).dot(q.row(i)) / (f.row(i).norm() * q.row(i).norm());
                worst = std::min(worst, c);
            }
            std::printf("  %-44s int8 worst cosine %.5f\n", name, worst);
            CHECK(worst >= 0.99);
            CHECK(worst < 1.0);  // it is quantized
        }
    }
}

TEST_CASE("transformer model: XLM-R positions start after the padding index", "[transformer]") {
    // Running the XLM-R fixture with BERT positions (0..n-1) must not match: the
    // fixture test above passes only with padding_idx + 1 + i.
    const fs::path dir = fixture("xlmr-mean");
    const auto exp = expected(dir);
    ragpp::TransformerModel m(dir);
    CHECK(m.config().family == ragpp::TransformerFamily::xlm_roberta);
    CHECK(m.config().pad_token_id == 1);
    CHECK(m.max_tokens() == m.config().max_position_embeddings - 2);
    auto cfg = m.config();
    cfg.family = ragpp::TransformerFamily::bert;
    auto st = std::make_shared<const ragpp::SafeTensors>(dir / "model.safetensors");
    ragpp::TransformerModel wrong(cfg, st);
    const auto seqs = ids_of(exp["tokens"]);
    ragpp::TransformerModel::Workspace ws;
    std::vector<float> h1, h2;
    std::vector<std::size_t> o1, o2;
    const ragpp::TransformerModel::Input in{seqs[0], {}};
    m.forward(std::span(&in, 1), ws, h1, o1);
    wrong.forward(std::span(&in, 1), ws, h2, o2);
    double d = 0;
    for (std::size_t i = 0; i < h1.size(); ++i) d = std::max(d, static_cast<double>(std::fabs(h1[i] - h2[i])));
    CHECK(d > 1e-2);
}

TEST_CASE("transformer model: bad token ids, type ids and lengths are InvalidArgument", "[transformer]") {
    const fs::path dir = fixture("bert-mean");
    const ragpp::TransformerModel m(dir);
    ragpp::TransformerModel::Workspace ws;
    std::vector<float> h;
    std::vector<std::size_t> off;
    const Ids bad_id{2, static_cast<ragpp::HfTokenizer::TokenId>(m.config().vocab_size), 3};
    const ragpp::TransformerModel::Input a{bad_id, {}};
    CHECK_THROWS_AS(m.forward(std::span(&a, 1), ws, h, off), ragpp::InvalidArgument);
    const Ids ok{2, 5, 3};
    const std::vector<std::uint32_t> bad_types{0, 2, 0}, short_types{0};
    const ragpp::TransformerModel::Input b{ok, bad_types}, c{ok, short_types};
    CHECK_THROWS_AS(m.forward(std::span(&b, 1), ws, h, off), ragpp::InvalidArgument);
    CHECK_THROWS_AS(m.forward(std::span(&c, 1), ws, h, off), ragpp::InvalidArgument);
    const Ids too_long(m.max_tokens() + 1, 5);
    const ragpp::TransformerModel::Input d{too_long, {}};
    CHECK_THROWS_AS(m.forward(std::span(&d, 1), ws, h, off), ragpp::InvalidArgument);
    const Ids longest(m.max_tokens(), 5);
    const ragpp::TransformerModel::Input e{longest, {}};
    CHECK_NOTHROW(m.forward(std::span(&e, 1), ws, h, off));
}

TEST_CASE("transformer model: a batch run by groups of sequences gives each sequence's rows alone", "[transformer]") {
    // forward() runs the sequences by groups of at most 384 rows by default (and the
    // feed-forward product by blocks of 192): 16 sequences of 1 to 64 tokens (about 520 rows) make two
    // groups, and every row must equal the sequence's rows computed alone, to the bit.
    const fs::path dir = fixture("bert-mean");
    for (const auto q : {ragpp::TransformerQuantization::none, ragpp::TransformerQuantization::int8}) {
        INFO("int8 " << (q == ragpp::TransformerQuantization::int8));
        const ragpp::TransformerModel m(dir, ragpp::TransformerModelOptions{q});
        std::mt19937 rng(7);
        std::uniform_int_distribution<std::uint32_t> id(5, static_cast<std::uint32_t>(m.config().vocab_size) - 1);
        std::vector<Ids> seqs;  // the inputs are views
        std::size_t rows = 0;
        for (std::size_t len : {64, 1, 63, 40, 64, 64, 64, 7, 33, 64, 2, 50, 64, 17, 64, 1}) {
            seqs.emplace_back(len);
            for (auto& t : seqs.back()) t = id(rng);
            rows += len;
        }
        std::vector<ragpp::TransformerModel::Input> batch;
        for (const Ids& ids : seqs) batch.push_back({ids, {}});
        REQUIRE(rows > 384);
        ragpp::TransformerModel::Workspace ws;
        std::vector<float> h, alone;
        std::vector<std::size_t> off, off1;
        m.forward(batch, ws, h, off);
        REQUIRE(off.back() == rows);
        const std::size_t H = m.hidden_size();
        REQUIRE(h.size() == rows * H);
        std::size_t differ = 0;
        for (std::size_t b = 0; b < batch.size(); ++b) {
            m.forward(std::span(&batch[b], 1), ws, alone, off1);
            REQUIRE(alone.size() == batch[b].ids.size() * H);
            for (std::size_t i = 0; i < alone.size(); ++i) differ += alone[i] != h[off[b] * H + i];
        }
        CHECK(differ == 0);
        // Other group sizes (0: the whole batch; 1: each sequence alone) give the same bits.
        for (std::size_t gt : {std::size_t{0}, std::size_t{1}, std::size_t{100}}) {
            const ragpp::TransformerModel other(dir, ragpp::TransformerModelOptions{q, ragpp::SafeTensors::Load::mmap, gt});
            std::vector<float> h2;
            other.forward(batch, ws, h2, off1);
            INFO("group_tokens " << gt);
            CHECK(h2 == h);
        }
        // A bad id in the last sequence: nothing computed, `h` unchanged.
        const std::vector<float> before = h;
        seqs.back().back() = static_cast<ragpp::HfTokenizer::TokenId>(m.config().vocab_size);
        CHECK_THROWS_AS(m.forward(batch, ws, h, off), ragpp::InvalidArgument);
        CHECK(h == before);
    }
}

// ======================================================================================
// Cross-encoders
// ======================================================================================

namespace {
struct CeFixture {
    fs::path dir;
    nlohmann::json exp;
    std::vector<Ids> seqs;
    std::vector<std::vector<std::uint32_t>> types;
    std::vector<std::pair<std::string, std::string>> pairs;
    explicit CeFixture(const std::string& name) : dir(fixture(name)), exp(expected(dir)), seqs(ids_of(exp["tokens"])) {
        for (const auto& t : exp["type_ids"]) types.push_back(t.get<std::vector<std::uint32_t>>());
        for (const auto& p : exp["pairs"]) pairs.emplace_back(p[0].get<std::string>(), p[1].get<std::string>());
    }
    void check(const std::vector<std::vector<float>>& got, const std::string& what) const {
        const auto& want = exp["logits"];
        REQUIRE(got.size() == want.size());
        double worst = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
            REQUIRE(got[i].size() == want[i].size());
            for (std::size_t k = 0; k < got[i].size(); ++k)
                worst = std::max(worst, std::fabs(static_cast<double>(got[i][k]) - want[i][k].get<double>()));
        }
        report(what, worst);
        CHECK(worst < 1e-3);
    }
};
}  // namespace

TEST_CASE("cross-encoder: logits from the fixture token ids match torch within 1e-3", "[transformer][cross-encoder]") {
    for (const char* name : {"ce-bert", "ce-xlmr"}) {
        SECTION(name) {
            const CeFixture f(name);
            const ragpp::CrossEncoderReranker ce(f.dir);
            CHECK(ce.max_length() == 40);
            CHECK(ce.num_labels() == 1);
            CHECK(ce.head() == (std::string(name) == "ce-bert" ? ragpp::CrossEncoderReranker::Head::bert
                                                               : ragpp::CrossEncoderReranker::Head::roberta));
            f.check(ce.logits_ids(f.seqs, f.types), std::string(name) + " logits (ids)");
            f.check(ce.logits_ids(f.seqs, f.types, 2), std::string(name) + " logits (ids, 2 threads)");
        }
    }
}

TEST_CASE("cross-encoder: pairs from text are encoded as the fixture (longest_first) and match torch",
          "[transformer][cross-encoder]") {
    for (const char* name : {"ce-bert", "ce-xlmr"}) {
        SECTION(name) {
            const CeFixture f(name);
            const ragpp::CrossEncoderReranker ce(f.dir);
            for (std::size_t i = 0; i < f.pairs.size(); ++i) {
                const auto e = ce.tokenizer().encode_pair(f.pairs[i].first, f.pairs[i].second, ce.max_length());
                INFO(f.pairs[i].first << " | " << f.pairs[i].second);
                CHECK(e.ids == f.seqs[i]);
                CHECK(e.type_ids == f.types[i]);
            }
            f.check(ce.logits(f.pairs), std::string(name) + " logits (text)");
        }
    }
}

TEST_CASE("cross-encoder: the Reranker call scores label 0 in input order, sigmoid option", "[transformer][cross-encoder]") {
    for (const char* name : {"ce-bert", "ce-xlmr"}) {
        SECTION(name) {
            const CeFixture f(name);
            const fs::path dir = f.dir;
            const ragpp::CrossEncoderReranker ce(dir);
            const auto& pairs = f.pairs;
            // The Reranker call: one question, its passages, scores = label 0, input order.
            const std::string q = pairs[0].first;
            std::vector<std::string_view> passages;
            std::vector<std::pair<std::string, std::string>> same_q;
            for (const auto& p : pairs) {
                passages.push_back(p.second);
                same_q.emplace_back(q, p.second);
            }
            const auto scores = ce(q, passages);
            const auto logits = ce.logits(same_q);
            REQUIRE(scores.size() == passages.size());
            for (std::size_t i = 0; i < scores.size(); ++i) CHECK(scores[i] == Approx(logits[i][0]).margin(1e-6));
            ragpp::CrossEncoderOptions so;
            so.sigmoid = true;
            so.threads = 2;
            so.batch_size = 2;
            const auto sig = ragpp::CrossEncoderReranker(dir, so)(q, passages);
            for (std::size_t i = 0; i < sig.size(); ++i) CHECK(sig[i] == Approx(1 / (1 + std::exp(-scores[i]))).margin(1e-6));
        }
    }
}

TEST_CASE("cross-encoder: threads and batch sizes do not change the logits, int8 stays close", "[transformer][cross-encoder]") {
    const fs::path dir = fixture("ce-bert");
    const auto exp = expected(dir);
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const auto& p : exp["pairs"]) pairs.emplace_back(p[0].get<std::string>(), p[1].get<std::string>());
    ragpp::CrossEncoderOptions a, b, q;
    a.threads = 1;
    b.threads = 2;
    b.batch_size = 2;
    q.quantize = ragpp::TransformerQuantization::int8;
    const auto la = ragpp::CrossEncoderReranker(dir, a).logits(pairs);
    const auto lb = ragpp::CrossEncoderReranker(dir, b).logits(pairs);
    const auto lq = ragpp::CrossEncoderReranker(dir, q).logits(pairs);
    double worst = 0;
    for (std::size_t i = 0; i < la.size(); ++i) {
        CHECK(std::fabs(la[i][0] - lb[i][0]) <= 1e-6);
        worst = std::max(worst, static_cast<double>(std::fabs(la[i][0] - lq[i][0])));
    }
    std::printf("  ce-bert int8 vs float32 logits max abs diff %.3g\n", worst);
    CHECK(worst < 0.1);
    ragpp::CrossEncoderOptions bad;
    bad.label = 1;
    CHECK_THROWS_AS(ragpp::CrossEncoderReranker(dir, bad), ragpp::InvalidArgument);
}

// ======================================================================================
// Bad input: each a ragpp::Error of the right type naming the file and the field
// ======================================================================================

TEST_CASE("transformer bad input: truncated safetensors", "[transformer][bad-input]") {
    BrokenCopy b("bert-mean");
    const fs::path st = b.dir / "model.safetensors";
    const auto size = fs::file_size(st);
    fs::resize_file(st, size / 2);
    require_error<ragpp::FormatError>(b.dir, {"model.safetensors"});
    fs::resize_file(st, 5);
    require_error<ragpp::FormatError>(b.dir, {"model.safetensors"});
}

TEST_CASE("transformer bad input: lying data_offsets", "[transformer][bad-input]") {
    BrokenCopy b("bert-mean");
    const fs::path st = b.dir / "model.safetensors";
    auto raw = RawSafetensors::read(st);
    auto& t = raw.header["encoder.layer.1.output.dense.weight"];
    const auto begin = t["data_offsets"][0].get<std::uint64_t>();
    t["data_offsets"] = {begin, begin + 8};  // fewer bytes than its shape needs
    raw.write(st);
    require_error<ragpp::FormatError>(b.dir, {"model.safetensors", "encoder.layer.1.output.dense.weight"});
    t["data_offsets"] = {begin, begin + 1'000'000'000ULL};  // beyond the data
    raw.write(st);
    require_error<ragpp::FormatError>(b.dir, {"model.safetensors", "encoder.layer.1.output.dense.weight"});
}

TEST_CASE("transformer bad input: I64 weights", "[transformer][bad-input]") {
    BrokenCopy b("bert-mean");
    const fs::path st = b.dir / "model.safetensors";
    auto raw = RawSafetensors::read(st);
    auto& t = raw.header["encoder.layer.0.attention.self.query.weight"];
    REQUIRE(t["dtype"] == "F32");
    t["dtype"] = "I64";
    t["shape"] = {16, 32};  // the same bytes as [32, 32] F32
    raw.write(st);
    require_error<ragpp::FormatError>(b.dir, {"model.safetensors", "encoder.layer.0.attention.self.query.weight", "I64"});
}

TEST_CASE("transformer bad input: config and tensor shapes disagree", "[transformer][bad-input]") {
    BrokenCopy b("bert-mean");
    auto cfg = b.config();
    cfg["intermediate_size"] = 48;
    b.set_config(cfg);
    require_error<ragpp::FormatError>(b.dir, {"model.safetensors", "encoder.layer.0.intermediate.dense.weight", "[48, 32]",
                                              "config.json"});
    cfg["intermediate_size"] = 64;
    cfg["vocab_size"] = 100000;
    b.set_config(cfg);
    require_error<ragpp::FormatError>(b.dir, {"embeddings.word_embeddings.weight", "[100000, 32]"});
}

TEST_CASE("transformer bad input: a missing tensor", "[transformer][bad-input]") {
    BrokenCopy b("bert-mean");
    const fs::path st = b.dir / "model.safetensors";
    auto raw = RawSafetensors::read(st);
    raw.header.erase("encoder.layer.1.attention.output.LayerNorm.bias");
    raw.write(st);
    require_error<ragpp::FormatError>(b.dir, {"model.safetensors", "encoder.layer.1.attention.output.LayerNorm.bias"});
    raw.header.erase("embeddings.word_embeddings.weight");
    raw.write(st);
    require_error<ragpp::FormatError>(b.dir, {"model.safetensors", "embeddings.word_embeddings.weight"});
}

TEST_CASE("transformer bad input: missing files", "[transformer][bad-input]") {
    {
        BrokenCopy b("bert-mean");
        fs::remove(b.dir / "tokenizer.json");
        require_error<ragpp::IoError>(b.dir, {"tokenizer.json"});
    }
    {
        BrokenCopy b("bert-mean");
        fs::remove(b.dir / "model.safetensors");
        require_error<ragpp::IoError>(b.dir, {"model.safetensors"});
        std::ofstream(b.dir / "pytorch_model.bin") << "pickle";
        require_error<ragpp::IoError>(b.dir, {"model.safetensors", "pytorch_model.bin"});
    }
    {
        BrokenCopy b("bert-mean");
        fs::remove(b.dir / "config.json");
        require_error<ragpp::IoError>(b.dir, {"config.json"});
    }
    {
        BrokenCopy b("ce-bert");
        fs::remove(b.dir / "tokenizer.json");
        CHECK_THROWS_AS(ragpp::CrossEncoderReranker(b.dir), ragpp::IoError);
    }
}

TEST_CASE("transformer bad input: config.json fields", "[transformer][bad-input]") {
    BrokenCopy b("bert-mean");
    const auto good = b.config();
    auto cfg = good;
    cfg["model_type"] = "gpt2";
    b.set_config(cfg);
    require_error<ragpp::UnsupportedError>(b.dir, {"config.json", "model_type", "gpt2"});
    cfg = good;
    cfg["hidden_act"] = "gelu_new";
    b.set_config(cfg);
    require_error<ragpp::UnsupportedError>(b.dir, {"config.json", "hidden_act", "gelu_new"});
    cfg = good;
    cfg.erase("num_attention_heads");
    b.set_config(cfg);
    require_error<ragpp::FormatError>(b.dir, {"config.json", "num_attention_heads"});
    cfg = good;
    cfg["num_attention_heads"] = 5;
    b.set_config(cfg);
    require_error<ragpp::FormatError>(b.dir, {"config.json", "num_attention_heads"});
    cfg = good;
    cfg["hidden_size"] = "32";
    b.set_config(cfg);
    require_error<ragpp::FormatError>(b.dir, {"config.json", "hidden_size"});
    std::ofstream(b.dir / "config.json", std::ios::trunc) << "{\"model_type\": ";
    require_error<ragpp::ParseError>(b.dir, {"config.json"});
}

TEST_CASE("transformer bad input: sentence-transformers modules", "[transformer][bad-input]") {
    BrokenCopy b("bert-mean");
    auto modules = nlohmann::json::parse(ragpp_test::read_file(b.dir / "modules.json"));
    modules.push_back({{"idx", 3}, {"name", "3"}, {"path", "3_Dense"}, {"type", "sentence_transformers.models.Dense"}});
    std::ofstream(b.dir / "modules.json", std::ios::trunc) << modules.dump();
    require_error<ragpp::UnsupportedError>(b.dir, {"modules.json", "sentence_transformers.models.Dense"});
    fs::remove(b.dir / "modules.json");
    // A plain Hugging Face folder: mean pooling, no normalization.
    const TransformerEmbedder plain(b.dir, no_prompts());
    CHECK(plain.pooling().mean);
    CHECK(!plain.pooling().normalize);
    const Eigen::VectorXf v = plain.embed("hello world");
    CHECK(std::fabs(v.norm() - 1.0f) > 1e-3);
    const TransformerEmbedder st(fixture("bert-mean"), no_prompts());
    CHECK(v.normalized().isApprox(st.embed("hello world"), 1e-5f));
    auto pooling = nlohmann::json::parse(ragpp_test::read_file(b.dir / "1_Pooling" / "config.json"));
    pooling["pooling_mode_lasttoken"] = true;
    std::ofstream(b.dir / "1_Pooling" / "config.json", std::ios::trunc) << pooling.dump();
    fs::copy_file(fixture("bert-mean") / "modules.json", b.dir / "modules.json");
    require_error<ragpp::UnsupportedError>(b.dir, {"1_Pooling", "pooling_mode_lasttoken"});
}

TEST_CASE("transformer pooling: several modes concatenate in sentence-transformers' order", "[transformer]") {
    // cls, max, mean, mean_sqrt_len on three rows of two values, by hand.
    ragpp::PoolingConfig p;
    p.cls = p.max = p.mean = p.mean_sqrt_len = true;
    const float rows[] = {1, -2, 3, 4, -1, 1};
    float out[8];
    p.apply(rows, 3, 2, out);
    const float want[] = {1, -2, 3, 4, 1, 1, 3 / std::sqrt(3.0f), 3 / std::sqrt(3.0f)};
    for (int i = 0; i < 8; ++i) CHECK(out[i] == Approx(want[i]).margin(1e-6));
    p.normalize = true;
    p.apply(rows, 3, 2, out);
    double n = 0;
    for (float x : out) n += double{x} * x;
    CHECK(n == Approx(1.0).margin(1e-6));
    CHECK(out[0] == Approx(1 / std::sqrt(1 + 4 + 9 + 16 + 1 + 1 + 3 + 3.0)).margin(1e-6));
}

TEST_CASE("transformer: empty inputs give empty outputs", "[transformer]") {
    const TransformerEmbedder e(fixture("bert-mean"), no_prompts());
    const std::vector<std::string> none;
    const RowMatrixXf m = e.embed_batch(none);
    CHECK(m.rows() == 0);
    CHECK(static_cast<std::size_t>(m.cols()) == e.dimension());
    const ragpp::CrossEncoderReranker ce(fixture("ce-bert"));
    CHECK(ce("question", std::span<const std::string_view>()).empty());
    // The empty text still has its special tokens.
    CHECK(e.token_ids("").size() == 2);
    CHECK(std::isfinite(e.embed("").norm()));
}
