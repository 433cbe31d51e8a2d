// 40: the reference story, end to end. A maintenance contract MX-200 (notice: three
// months), its 2025 amendment (two months), a product sheet that repeats "MX-200" and a
// few other notes, in French. The question asks for the notice period; the answer stage
// (ragpp::answer, the call `ragpp ask` makes through ragpp::Engine::answer) hands the
// model the contract and the amendment, first and second, notes that they differ in
// date, and refuses a question the notes cannot answer, saying why.
#include <ragpp/answer/answer.hpp>
#include <ragpp/chunk/chunker.hpp>
#include <ragpp/index/bm25.hpp>
#include <ragpp/retrieve/retriever.hpp>
#include <ragpp/text/analyzer.hpp>

#include <cstdio>
#include <string>

int main() {
    using ragpp::Date;
    const struct {
        const char* path;
        const char* text;
        ragpp::Metadata meta;
    } sources[] = {
        {"contrats/mx200.md",
         "# Contrat de maintenance MX-200\n\n## Article 7 : Résiliation\n\nChaque partie peut résilier le contrat de "
         "maintenance MX-200 avec un préavis de trois mois, notifié par lettre recommandée avec accusé de réception.\n\n"
         "## Article 8 : Tarif\n\nLa redevance annuelle est de 4 800 euros, payable à trente jours.\n",
         {{"date", Date::parse("2023-01-10")}}},
        {"contrats/mx200-avenant-1.md",
         "# Avenant n°1 au contrat MX-200\n\n## Article 7\n\nÀ compter du 1er mars 2025, le préavis de résiliation du "
         "contrat de maintenance est ramené à deux mois.\n",
         {{"date", Date::parse("2025-03-01")}}},
        {"produits/mx200-fiche.md",
         "# Fiche produit MX-200\n\nLa presse MX-200 est livrée avec le contrat de maintenance MX-200. Le contrat de "
         "maintenance MX-200 couvre la presse MX-200 ; commandez le contrat de maintenance MX-200 avec la MX-200. Le "
         "contrat de maintenance MX-200 inclut les pièces détachées.\n",
         {}},
        {"procedures/badge.md",
         "# Procédure badge\n\nUn badge perdu est signalé à l'accueil ; un nouveau badge est remis sous un jour ouvré.\n",
         {}},
        {"glossaire.md", "# Glossaire\n\n## Préavis\n\nDélai entre l'annonce de la fin d'un contrat et sa fin effective.\n",
         {}},
    };

    // BM25 with the French analyzer: the default pipeline of `ragpp ask` with the built-in
    // embedder (`ragpp index --analyzer french`).
    ragpp::Retriever retriever{ragpp::BM25Index<ragpp::FrenchAnalyzer>{}};
    for (const auto& s : sources)
        for (const auto& chunk : ragpp::chunk_document({s.path, s.text, s.meta}, {}))
            retriever.add_document(ragpp::document_with_raw_offset(chunk));
    const auto& bm25 = retriever.index<0>();
    // The statistics the confidence reads: those of the documents the reader may read.
    const ragpp::TermStatistics stats{bm25.size(), [&](std::string_view t) { return bm25.document_frequency(t); }};
    ragpp::AnswerOptions options;
    options.passages = 3;
    options.evidence.nonce_mode = ragpp::NonceMode::content_hash;  // reproducible output; the default draws it at random

    const std::string question = "Quel est le préavis pour résilier le contrat de maintenance MX-200 ?";
    const auto a = ragpp::answer(question, retriever.search(question, options.passages), bm25.analyzer(), stats, options);
    std::printf("Question: %s\n", question.c_str());
    for (std::size_t i = 0; i < a.passages.size(); ++i)
        std::printf("  %zu. %-30s bm25 %.3f, query coverage %.3f\n", i + 1, a.passages[i].document->id.c_str(),
                    *a.passages[i].trace[0].score, a.coverage.passages[i]);
    std::printf("Confidence %.3f (threshold %.2f): %s\n\n", a.confidence, a.min_confidence,
                a.answered ? "answered from the evidence" : "refused");
    if (a.evidence) std::printf("%s\n", a.evidence->render().c_str());

    // Questions the notes cannot answer: one shares nothing with them, one names a press
    // they do not hold and shares two words with the product sheet.
    for (const std::string other : {"Quelle est la capitale du Pérou ?",
                                    "Quel est le délai de livraison de la presse MX-300 ?"}) {
        const auto b = ragpp::answer(other, retriever.search(other, options.passages), bm25.analyzer(), stats, options);
        std::printf("Question: %s\nConfidence %.3f: %s\n", other.c_str(), b.confidence,
                    b.answered ? "answered" : "refused, because:");
        for (const auto& why : b.reasons) std::printf("  - %s\n", why.c_str());
    }
}
