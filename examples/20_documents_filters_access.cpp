// Documents in, chunks out: a Collection chunks Markdown sources, indexes every chunk
// in a hybrid retriever (BM25 + hashed vectors), and searches on behalf of a user:
// only chunks the user's groups may read, and only those the filter accepts, are
// ever scored. Removing a source leaves nothing to find.
#include <ragpp/embed/hashing.hpp>
#include <ragpp/index/bm25.hpp>
#include <ragpp/index/vector.hpp>
#include <ragpp/retrieve/collection.hpp>
#include <ragpp/text/analyzer.hpp>

#include <cstdio>
#include <string>
#include <vector>

using Hybrid = ragpp::Retriever<ragpp::BM25Index<ragpp::FrenchAnalyzer>, ragpp::VectorIndex<ragpp::HashingEmbedder>>;

static void show(const char* title, const std::vector<ragpp::Result>& results) {
    std::printf("%s\n", title);
    if (results.empty()) std::printf("  (nothing)\n");
    for (const auto& r : results) std::printf("  %s  [%s]\n", r.document->id.c_str(), r.document->text.substr(0, r.document->text.find('\n')).c_str());
}

int main() {
    ragpp::Collection<Hybrid> docs;  // deny unlabeled documents: secure by default
    using Groups = std::vector<std::string>;
    docs.add({"contrats/mx200.md",
              "---\ntitle: Contrat MX-200\ntype: contrat\n---\n"
              "# Contrat MX-200\n\n## Article 7 : préavis\n\nLe préavis de résiliation est de deux mois.\n\n"
              "## Article 8 : tarifs\n\nLe taux est de 4,5 % par mois.\n",
              {{"groups", Groups{"juridique"}}}});
    docs.add({"notes/cantine.md", "# Cantine\n\nLe menu change chaque mois.\n", {{"groups", Groups{"tous", "juridique"}}}});
    docs.add({"brouillon.md", "# Brouillon\n\nPréavis de trois mois ?\n", {}});  // no groups: nobody sees it

    const auto juriste = ragpp::Principal::with_groups({"juridique"});
    const auto stagiaire = ragpp::Principal::with_groups({"tous"});
    show("juriste, 'préavis mois':", docs.search("préavis mois", 3, ragpp::Filter::all(), juriste));
    show("stagiaire, 'préavis mois':", docs.search("préavis mois", 3, ragpp::Filter::all(), stagiaire));
    show("juriste, 'mois', type=contrat:", docs.search("mois", 3, ragpp::parse_filter("type=contrat"), juriste));

    const auto hit = docs.search("taux", 1, ragpp::Filter::all(), juriste).front().id;
    std::printf("section of %s: %zu chunk(s); neighbours:", docs.retriever().document(hit)->id.c_str(),
                docs.section_of(hit).size());
    for (auto id : docs.neighbours(hit)) std::printf(" %s", docs.retriever().document(id)->id.c_str());
    std::printf("\n");

    docs.remove("contrats/mx200.md");
    show("after removing the contract, juriste, 'préavis mois':",
         docs.search("préavis mois", 3, ragpp::Filter::all(), juriste));
}
