// 05: vector search with the built-in HashingEmbedder (no model, no download): it
// finds shared words and word parts, including spelling variants ("vectorise" /
// "vectorize"), not synonyms: "car" does not find the automobile (score 0; the small
// score of the first text is a hash collision in 256 dimensions).
// Output compared with 05_vector_search.expected.
#include <ragpp/embed/hashing.hpp>
#include <ragpp/index/vector.hpp>

#include <cstdio>

int main() {
    ragpp::VectorIndex<ragpp::HashingEmbedder> index;  // cosine similarity, float32 rows
    index.add_document(0, {"a", "How to vectorise text for semantic search", {}});
    index.add_document(1, {"b", "Bananas are rich in potassium", {}});
    index.add_document(2, {"c", "Indexing vectors at memory speed", {}});
    index.add_document(3, {"d", "An automobile needs fuel", {}});
    for (const char* query : {"vectorize search", "vector index", "car"}) {
        std::printf("%s:", query);
        for (const ragpp::Hit& hit : index.search(query, 2)) std::printf("  %u (%.3f)", hit.id, static_cast<double>(hit.score));
        std::printf("\n");
    }
}
