// bench_transformer: speed and exactness of TransformerEmbedder on a model folder made
// by bench/torch_encoder_bench.py (a random MiniLM-L6-shaped BERT, SciFact passages cut
// to exactly 128 tokens, torch's reference vectors of the first 16).
//
//   bench_transformer MODEL_DIR [--n 256] [--batch 32] [--runs 3] [--threads 1] [--group-tokens 384]
//
// Prints one JSON line: texts per second (wall) and per CPU second, GFLOP/s (the
// encoder's multiply-adds x 2 per text: 2 s (4H^2 + 2HI) + 4 s^2 H per layer), for
// float32 and int8, and at one thread each stage's CPU ms per text (the layers' QKV
// product, attention, ...: RAGPP_TRANSFORMER_STAGE_TIMES); the max abs difference of
// the float32 vectors to torch's, the smallest int8-to-float32 cosine, and whether the
// tokenizer reproduced the ids, the kernels' path (isa) and how float32 products run
// ("amx_bf16x6" on the AMX-BF16 tiles, else "fma"; RAGPP_SIMD=avx512 picks the FMA ones).
// --group-tokens: TransformerEmbedderOptions::group_tokens (0: each batch as one group).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#define RAGPP_TRANSFORMER_STAGE_TIMES 1  // the per-stage CPU times (transformer.hpp)
#include <ragpp/embed/transformer.hpp>

namespace {
using Ids = std::vector<ragpp::HfTokenizer::TokenId>;

struct Timing {
    double wall = 0, cpu = 0;
};

template <class F>
Timing time_it(F&& f) {
    const auto w0 = std::chrono::steady_clock::now();
    const std::clock_t c0 = std::clock();
    f();
    const std::clock_t c1 = std::clock();
    const auto w1 = std::chrono::steady_clock::now();
    return {std::chrono::duration<double>(w1 - w0).count(), static_cast<double>(c1 - c0) / CLOCKS_PER_SEC};
}
}  // namespace

int main(int argc, char** argv) try {
    if (argc < 2) {
        std::fprintf(stderr, "usage: bench_transformer MODEL_DIR [--n 256] [--batch 32] [--runs 3] [--threads 1] [--group-tokens 384]\n");
        return 2;
    }
    const std::string dir = argv[1];
    std::size_t n = 256, batch = 32, runs = 3, threads = 1, group_tokens = 384;
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        const std::size_t v = std::stoul(argv[i + 1]);
        if (a == "--n") n = v;
        else if (a == "--batch") batch = v;
        else if (a == "--group-tokens") group_tokens = v;
        else if (a == "--runs") runs = v;
        else if (a == "--threads") threads = v;
        else throw std::runtime_error("unknown option " + a);
    }
    const auto passages = nlohmann::json::parse(std::ifstream(dir + "/passages_128.json"));
    const auto reference = nlohmann::json::parse(std::ifstream(dir + "/reference_vectors.json"));
    std::vector<Ids> ids;
    for (const auto& s : passages["ids"]) ids.push_back(s.get<Ids>());
    const auto texts = passages["texts"].get<std::vector<std::string>>();
    n = std::min(n, ids.size());
    ids.resize(n);

    ragpp::TransformerEmbedderOptions o;
    o.threads = threads;
    o.batch_size = batch;
    o.group_tokens = group_tokens;
    o.prefixes = ragpp::RolePrefixes{};
    const auto t_load = std::chrono::steady_clock::now();
    const ragpp::TransformerEmbedder f32(dir, o);
    const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_load).count();
    o.quantize = ragpp::TransformerQuantization::int8;
    const ragpp::TransformerEmbedder i8(dir, o);

    const auto& c = f32.model().config();
    const double s = 128, H = static_cast<double>(c.hidden_size), I = static_cast<double>(c.intermediate_size);
    const double gflop = static_cast<double>(c.num_hidden_layers) * (2 * s * (4 * H * H + 2 * H * I) + 4 * s * s * H) / 1e9;

    // Exactness against torch, and the tokenizer against the oracle's ids.
    std::size_t tok_equal = 0, tok_checked = std::min<std::size_t>(texts.size(), 64);
    for (std::size_t i = 0; i < tok_checked; ++i) tok_equal += f32.token_ids(texts[i]) == passages["ids"][i].get<Ids>();
    const auto& ref = reference["vectors"];
    const std::vector<Ids> head(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), ref.size())));
    const ragpp::RowMatrixXf got = f32.embed_ids(head, threads);
    double max_diff = 0;
    for (std::size_t i = 0; i < head.size(); ++i)
        for (std::size_t k = 0; k < ref[i].size(); ++k)
            max_diff = std::max(max_diff, std::fabs(static_cast<double>(got(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(k))) -
                                                    ref[i][k].get<double>()));

    // Per-stage CPU time of the layers, ms per text over all the runs (one thread only:
    // the counters are per thread).
    nlohmann::json stages_f32, stages_i8;
    auto bench = [&](const ragpp::TransformerEmbedder& e, ragpp::RowMatrixXf& out, nlohmann::json& stages) {
        for (double& v : ragpp::detail::transformer_stage_seconds) v = 0;
        std::vector<Timing> t;
        for (std::size_t r = 0; r < runs; ++r) t.push_back(time_it([&] { out = e.embed_ids(ids, threads); }));
        std::sort(t.begin(), t.end(), [](const Timing& a, const Timing& b) { return a.wall < b.wall; });
        if (threads == 1) {
            const char* names[7] = {"qkv", "attention", "attn_out", "add_norm1", "inter_gelu", "out", "add_norm2"};
            for (std::size_t i = 0; i < 7; ++i)
                stages[names[i]] = std::round(ragpp::detail::transformer_stage_seconds[i] * 1e3 /
                                              static_cast<double>(runs * n) * 1e3) / 1e3;
        }
        return t[t.size() / 2];
    };
    ragpp::RowMatrixXf vf, vq;
    const Timing tf = bench(f32, vf, stages_f32), tq = bench(i8, vq, stages_i8);
    double min_cos = 1;
    for (Eigen::Index i = 0; i < vf.rows(); ++i)
        min_cos = std::min(min_cos, static_cast<double>(vf.row(i).dot(vq.row(i)) / (vf.row(i).norm() * vq.row(i).norm())));
    const double dn = static_cast<double>(n);
    nlohmann::json line = {
        {"model", dir}, {"n", n}, {"batch", batch}, {"group_tokens", group_tokens}, {"runs", runs}, {"threads", threads}, {"seq", 128},
        {"gflop_per_text", std::round(gflop * 1e4) / 1e4}, {"load_s", load_s},
        {"f32_texts_per_s", dn / tf.wall}, {"f32_texts_per_cpu_s", dn / tf.cpu}, {"f32_gflop_per_s", dn * gflop / tf.wall},
        {"int8_texts_per_s", dn / tq.wall}, {"int8_texts_per_cpu_s", dn / tq.cpu}, {"int8_gflop_per_s", dn * gflop / tq.wall},
        {"f32_max_abs_diff_to_torch", max_diff}, {"int8_min_cosine_to_f32", min_cos},
        {"tokenizer_ids_equal", std::to_string(tok_equal) + "/" + std::to_string(tok_checked)},
        {"isa", std::string(ragpp::detail::nn::isa_name(ragpp::detail::nn::active_isa()))},
        {"float32_products", ragpp::detail::nn::f32_on_amx(ragpp::detail::nn::active_isa()) ? "amx_bf16x6" : "fma"}};
    if (threads == 1) {
        line["f32_stage_ms_per_text"] = stages_f32;
        line["int8_stage_ms_per_text"] = stages_i8;
    }
    std::printf("%s\n", line.dump().c_str());
    return max_diff < 1e-4 && min_cos >= 0.99 ? 0 : 1;
} catch (const std::exception& e) {
    std::fprintf(stderr, "bench_transformer: %s\n", e.what());
    return 1;
}
