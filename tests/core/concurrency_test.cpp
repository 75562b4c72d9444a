// Sessions of one Engine on two threads at once, with every shipped planner and scorer: each
// session must plan and attend exactly as it does when the same work runs serially. The
// sessions share the engine's planner, scorer and backend; the scorer's encoder (MiniLM) and
// the planner are where shared state would show. Also built under ThreadSanitizer (the `tsan`
// preset), which reports the races that happen not to change a result.

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cocktail/config.hpp"
#include "cocktail/engine.hpp"
#include "cocktail/text_pieces.hpp"
#include "models/bert/tiny_bert.hpp"
#include "support/random_kv.hpp"

namespace cocktail {
namespace {

constexpr int kChunkSize = 32;
constexpr int kQHeads = 4;
constexpr int kDecodeSteps = 40;
const KvShape kShape{2, 2, 64};

// Each session asks about words that fill a chunk of its own, so the two plans differ and
// a session that saw the other's query or scores would plan differently.
struct Question {
  std::string words;
  int chunk;
};
const std::array<Question, 2> kQuestions = {
    {{" saffron glacier tungsten meridian", 1}, {" harbour quartz ember willow", 4}}};

// 224 word pieces: filler, except the chunks that hold a question's words.
std::vector<std::string> context_pieces() {
  std::vector<std::string> pieces;
  for (int i = 0; i < 7 * kChunkSize; ++i) {
    std::string piece = " filler" + std::to_string(i);
    for (const Question& q : kQuestions) {
      if (i / kChunkSize == q.chunk) {
        const std::vector<std::string> words = split_word_pieces(q.words);
        piece = words[std::size_t(i) % words.size()];
      }
    }
    pieces.push_back(piece);
  }
  return pieces;
}

// What a session did: the plan it committed and every decode output, to compare bit for bit.
struct SessionRecord {
  std::vector<ChunkPlan> chunks;
  std::vector<float> outputs;

  bool operator==(const SessionRecord& other) const {
    if (outputs != other.outputs || chunks.size() != other.chunks.size()) return false;
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      const ChunkPlan& a = chunks[c];
      const ChunkPlan& b = other.chunks[c];
      // Scores compared as bits: the unscored remainder's NaN equals itself here.
      if (a.first_token != b.first_token || a.n_tokens != b.n_tokens ||
          a.precision != b.precision ||
          std::bit_cast<std::uint64_t>(a.score) != std::bit_cast<std::uint64_t>(b.score)) {
        return false;
      }
    }
    return true;
  }
};

// The query's attention for the layers the scorer asks for, from random query rows.
QueryAttention query_attention(const Engine& engine, const Session& session, std::int64_t n_context,
                               std::mt19937& rng) {
  QueryAttention out;
  out.layers = engine.scorer().query_attention_layers(kShape.n_layers);
  out.n_heads = kQHeads;
  out.n_tokens = n_context;
  const std::int64_t n_query = session.store().n_tokens() - n_context;
  for (const int layer : out.layers) {
    const auto q = testing::random_floats(std::size_t(n_query * kQHeads * kShape.head_dim), rng);
    std::vector<float> mass(std::size_t(kQHeads * session.store().n_tokens()));
    session.attention_mass(layer, q, n_query, kQHeads, mass);
    for (int h = 0; h < kQHeads; ++h) {
      const auto head = mass.begin() + std::ptrdiff_t(h) * session.store().n_tokens();
      out.mass.insert(out.mass.end(), head, head + n_context);
    }
  }
  return out;
}

// Prefill, plan with question `which`, then decode steps (where the recency planner re-plans).
SessionRecord run_session(const Engine& engine, int which) {
  std::mt19937 rng(unsigned(100 + which));
  Session session = engine.new_session(kShape);
  const std::vector<std::string> context = context_pieces();
  const std::string& query = kQuestions[std::size_t(which)].words;
  testing::append_random(session, kShape, std::int64_t(context.size()), rng);
  testing::append_random(session, kShape, 4, rng);
  const QueryAttention attention =
      query_attention(engine, session, std::int64_t(context.size()), rng);
  SessionRecord record;
  session.plan_and_commit(context, query, &attention);
  std::vector<float> out(std::size_t(kQHeads * kShape.head_dim));
  for (int step = 0; step < kDecodeSteps; ++step) {
    testing::append_random(session, kShape, 1, rng);
    for (int layer = 0; layer < kShape.n_layers; ++layer) {
      session.decode_attention(layer, testing::random_floats(out.size(), rng), kQHeads, out);
      record.outputs.insert(record.outputs.end(), out.begin(), out.end());
    }
  }
  record.chunks = session.store().plan().chunks;
  return record;
}

struct PlannerAndScorer {
  std::string planner;
  std::string scorer;
};

void PrintTo(const PlannerAndScorer& p, std::ostream* os) {
  *os << p.planner << " + " << p.scorer;
}

// A tiny random MiniLM-shaped encoder for the minilm scorer, written once for the suite.
const std::filesystem::path& tiny_minilm_dir() {
  static const testing::TempDir folder;
  static const std::filesystem::path dir = testing::TinyBert(3).write(folder);
  return dir;
}

class SessionsOnTwoThreadsTest : public ::testing::TestWithParam<PlannerAndScorer> {
 protected:
  static Config config() {
    return parse_config(
        "", "concurrency_test.toml",
        {"engine.planner=" + GetParam().planner, "engine.scorer=" + GetParam().scorer,
         "scorer.minilm.model_dir=" + tiny_minilm_dir().string(),
         // Small enough that tokens age through the tiers while decoding.
         "planner.recency.recent_tokens=16", "planner.recency.int8_tokens=32"});
  }
};

TEST_P(SessionsOnTwoThreadsTest, GiveTheSerialResults) {
  const Engine engine(config());
  const std::array<SessionRecord, 2> serial = {run_session(engine, 0), run_session(engine, 1)};
  ASSERT_FALSE(serial[0].chunks == serial[1].chunks && serial[0].outputs == serial[1].outputs)
      << "the two sessions must do different work";
  for (int round = 0; round < 3; ++round) {
    std::array<SessionRecord, 2> parallel;
    std::thread other([&] { parallel[1] = run_session(engine, 1); });
    parallel[0] = run_session(engine, 0);
    other.join();
    EXPECT_TRUE(parallel[0] == serial[0]) << "round " << round;
    EXPECT_TRUE(parallel[1] == serial[1]) << "round " << round;
  }
}

std::vector<PlannerAndScorer> every_planner_and_scorer() {
  std::vector<PlannerAndScorer> out;
  for (const char* planner : {"cocktail", "uniform", "recency", "budget"}) {
    for (const char* scorer : {"bm25", "minilm", "attention"}) out.push_back({planner, scorer});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(EveryShippedPlugin, SessionsOnTwoThreadsTest,
                         ::testing::ValuesIn(every_planner_and_scorer()),
                         [](const ::testing::TestParamInfo<PlannerAndScorer>& param_info) {
                           return param_info.param.planner + "_" + param_info.param.scorer;
                         });

}  // namespace
}  // namespace cocktail
