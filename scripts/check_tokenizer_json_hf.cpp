// The ragpp side of scripts/check_tokenizer_json_hf.sh: reads JSON lines [a, b, max_length]
// (b null: a single text; max_length 0: no limit, no special tokens) and prints
// [ids, type_ids] per line, as scripts/check_tokenizer_json_hf.js does with HF tokenizers.
#include <ragpp/embed/tokenizer_json.hpp>

#include <fstream>
#include <iostream>

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: check_tokenizer_json_hf tokenizer.json cases.jsonl\n";
        return 2;
    }
    const auto t = ragpp::HfTokenizer::from_file(argv[1]);
    std::ifstream in(argv[2]);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        const auto c = nlohmann::json::parse(line);
        const auto m = c[2].get<std::size_t>();
        const auto a = c[0].get<std::string>();
        ragpp::HfTokenizer::Encoding e;
        if (m == 0 && c[1].is_null()) {
            e.ids = t.encode(a);
            e.type_ids.assign(e.ids.size(), 0);
        } else {
            e = c[1].is_null() ? t.encode_special(a, m) : t.encode_pair(a, c[1].get<std::string>(), m);
        }
        std::cout << nlohmann::json::array({e.ids, e.type_ids}).dump() << "\n";
    }
}
