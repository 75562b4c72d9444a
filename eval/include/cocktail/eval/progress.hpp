#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace cocktail::eval {

// "0:42", "12:05", "1:02:03"; "--:--" for a time not known (negative or not finite).
std::string format_duration(double seconds);

// One progress line: "eval [#####.......] 12/40 runs 30% 1:10 ETA 2:43 niah-2048-d0.50 fp16".
// The ETA assumes the remaining work goes at the pace so far; it is unknown until some is done.
std::string progress_line(std::string_view label, std::int64_t done, std::int64_t total,
                          std::string_view unit, double elapsed_s, std::string_view detail);

// A progress line: the eval runner advances it once per case and sets the detail to what runs
// now (a prefill callback can put its token count there too); `cocktail run` can show its
// prefill with one. Work is counted in any unit, so weighting runs by their context length makes
// the ETA honest. For people watching a terminal it is redrawn in place, at most ten times a
// second and always at the end, and the destructor ends the line. For a log file (a long eval
// run in the background) it is written as whole lines instead, at most one every
// kLogLineEvery seconds, and a last one at the end if any was written: short work stays silent.
class Progress {
 public:
  // Seconds on a monotonic clock.
  using Clock = std::function<double()>;
  enum class Style { redraw, log_lines };
  static constexpr double kLogLineEvery = 10.0;

  // Draws on `out`; with nullptr it only counts.
  Progress(std::string label, std::int64_t total, std::string unit, std::ostream* out,
           Clock clock = steady_seconds, Style style = Style::redraw);
  // Draws on stderr: redrawn in place on a terminal, as log lines otherwise.
  static Progress on_stderr(std::string label, std::int64_t total, std::string unit);

  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  Progress(Progress&& other) noexcept;
  Progress& operator=(Progress&&) = delete;
  ~Progress();

  void advance(std::int64_t amount = 1);
  void update(std::int64_t done);
  void set_detail(std::string detail);
  // Draws the final state and ends the line; later calls do nothing.
  void finish();

  std::int64_t done() const { return done_; }
  static double steady_seconds();

 private:
  void draw(bool force);
  void write_log_line(bool force);

  std::string label_;
  std::int64_t total_ = 0;
  std::string unit_;
  std::ostream* out_ = nullptr;
  Clock clock_;
  Style style_ = Style::redraw;
  double start_ = 0.0;
  double last_draw_ = 0.0;
  bool drawn_ = false;
  bool stale_ = false;  // changed since the last draw
  std::int64_t done_ = 0;
  std::string detail_;
  bool finished_ = false;
};

}  // namespace cocktail::eval
