#include "cocktail/eval/progress.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

namespace cocktail::eval {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;

TEST(FormatDurationTest, MinutesAndHours) {
  EXPECT_EQ(format_duration(0), "0:00");
  EXPECT_EQ(format_duration(59.4), "0:59");
  EXPECT_EQ(format_duration(61), "1:01");
  EXPECT_EQ(format_duration(3723), "1:02:03");
  EXPECT_EQ(format_duration(-1), "--:--");
  EXPECT_EQ(format_duration(NAN), "--:--");
}

TEST(ProgressLineTest, ShowsBarCountsAndEta) {
  // A quarter done in 10 s leaves 30 s at the same pace.
  EXPECT_EQ(progress_line("eval", 5, 20, "runs", 10.0, "niah-1024-d0.50 fp16"),
            "eval [#####...............] 5/20 runs 25% 0:10 ETA 0:30 niah-1024-d0.50 fp16");
  EXPECT_THAT(progress_line("eval", 0, 20, "runs", 3.0, ""),
              EndsWith("0/20 runs 0% 0:03 ETA --:--"));
}

TEST(ProgressLineTest, LongDetailsAreCut) {
  const std::string line = progress_line("p", 1, 1, "x", 0, std::string(60, 'd'));
  EXPECT_THAT(line, EndsWith(" " + std::string(45, 'd') + "..."));
}

struct FakeClock {
  double now = 0.0;
  Progress::Clock clock() {
    return [this] { return now; };
  }
};

TEST(ProgressTest, RedrawsAtMostTenTimesASecondAndAlwaysAtTheEnd) {
  std::ostringstream out;
  FakeClock time;
  {
    Progress progress("eval", 4, "runs", &out, time.clock());
    progress.advance();  // drawn: the first draw
    time.now = 0.05;
    progress.advance();  // too soon
    time.now = 0.2;
    progress.set_detail("fp16");  // drawn
    time.now = 0.21;
    progress.update(4);  // the end is always drawn
    progress.finish();
    progress.finish();
    EXPECT_EQ(progress.done(), 4);
  }
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\r'), 3);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
  EXPECT_THAT(text, HasSubstr("\reval [#####...............] 1/4 runs 25% 0:00 ETA 0:00\x1b[K"));
  EXPECT_THAT(text, HasSubstr("2/4 runs 50% 0:00 ETA 0:00 fp16"));
  EXPECT_THAT(text, EndsWith("4/4 runs 100% 0:00 ETA 0:00 fp16\x1b[K\n"));
}

TEST(ProgressTest, AnUnfinishedLineEndsWhenTheProgressGoes) {
  std::ostringstream out;
  FakeClock time;
  {
    Progress progress("prefill", 100, "tokens", &out, time.clock());
    progress.update(40);
    Progress moved = std::move(progress);
    time.now = 1.0;
    moved.update(50);
  }
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("50/100 tokens 50% 0:01 ETA 0:01"));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);
  EXPECT_THAT(text, EndsWith("\n"));
}

TEST(ProgressTest, LogLinesAreWholeLinesAtMostEveryTenSeconds) {
  std::ostringstream out;
  FakeClock time;
  Progress progress("eval", 40, "tokens", &out, time.clock(), Progress::Style::log_lines);
  progress.set_detail("case-a");
  time.now = 5.0;
  progress.advance(10);  // too soon after the start
  EXPECT_EQ(out.str(), "");
  time.now = 12.0;
  progress.set_detail("case-b, prefill 512/1024 tokens");  // a detail is news too, when due
  time.now = 13.0;
  progress.set_detail("case-b");  // 1 s after that line: waits
  progress.advance(10);
  time.now = 15.0;
  progress.advance(20);  // the end, but only 3 s after the last line: left to finish()
  progress.finish();
  progress.finish();
  const std::string text = out.str();
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_EQ(text,
            "eval [#####...............] 10/40 tokens 25% 0:12 ETA 0:36 case-b, prefill 512/1024 "
            "tokens\n"
            "eval [####################] 40/40 tokens 100% 0:15 ETA 0:00 case-b\n");
}

TEST(ProgressTest, ShortWorkWritesNoLogLine) {
  std::ostringstream out;
  FakeClock time;
  {
    Progress progress("prefill", 100, "tokens", &out, time.clock(), Progress::Style::log_lines);
    time.now = 2.0;
    progress.update(100);
    progress.finish();
  }
  EXPECT_EQ(out.str(), "");
}

TEST(ProgressTest, WithoutAStreamItOnlyCounts) {
  Progress progress("eval", 3, "runs", nullptr);
  progress.advance(2);
  progress.finish();
  EXPECT_EQ(progress.done(), 2);
}

}  // namespace
}  // namespace cocktail::eval
