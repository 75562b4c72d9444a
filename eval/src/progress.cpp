#include "cocktail/eval/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <utility>

namespace cocktail::eval {

namespace {

constexpr int kBarWidth = 20;
constexpr std::size_t kMaxDetail = 48;
constexpr double kRedrawEvery = 0.1;

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const auto total = static_cast<std::int64_t>(std::lround(seconds));
  const std::int64_t h = total / 3600, m = total / 60 % 60, s = total % 60;
  return h > 0 ? fmt::format("{}:{:02}:{:02}", h, m, s) : fmt::format("{}:{:02}", m, s);
}

std::string progress_line(std::string_view label, std::int64_t done, std::int64_t total,
                          std::string_view unit, double elapsed_s, std::string_view detail) {
  const double fraction = total > 0 ? std::clamp(double(done) / double(total), 0.0, 1.0) : 1.0;
  const auto filled = static_cast<std::size_t>(fraction * kBarWidth);
  const double eta = done > 0 ? elapsed_s * double(total - done) / double(done) : -1.0;
  std::string line =
      fmt::format("{} [{}{}] {}/{} {} {:.0f}% {} ETA {}", label, std::string(filled, '#'),
                  std::string(kBarWidth - filled, '.'), done, total, unit, fraction * 100,
                  format_duration(elapsed_s), format_duration(eta));
  if (!detail.empty()) {
    line += " ";
    line += detail.size() > kMaxDetail ? std::string(detail.substr(0, kMaxDetail - 3)) + "..."
                                       : std::string(detail);
  }
  return line;
}

double Progress::steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Progress::Progress(std::string label, std::int64_t total, std::string unit, std::ostream* out,
                   Clock clock, Style style)
    : label_(std::move(label)),
      total_(total),
      unit_(std::move(unit)),
      out_(out),
      clock_(std::move(clock)),
      style_(style),
      start_(clock_()),
      last_draw_(start_) {}

Progress Progress::on_stderr(std::string label, std::int64_t total, std::string unit) {
  return Progress(std::move(label), total, std::move(unit), &std::cerr, steady_seconds,
                  isatty(STDERR_FILENO) ? Style::redraw : Style::log_lines);
}

Progress::Progress(Progress&& other) noexcept
    : label_(std::move(other.label_)),
      total_(other.total_),
      unit_(std::move(other.unit_)),
      out_(std::exchange(other.out_, nullptr)),
      clock_(std::move(other.clock_)),
      style_(other.style_),
      start_(other.start_),
      last_draw_(other.last_draw_),
      drawn_(other.drawn_),
      stale_(other.stale_),
      done_(other.done_),
      detail_(std::move(other.detail_)),
      finished_(std::exchange(other.finished_, true)) {}

Progress::~Progress() {
  // An early exit (an error) still leaves the terminal on a fresh line.
  if (out_ && drawn_ && !finished_ && style_ == Style::redraw) *out_ << "\n" << std::flush;
}

void Progress::advance(std::int64_t amount) {
  update(done_ + amount);
}

void Progress::update(std::int64_t done) {
  done_ = done;
  stale_ = true;
  draw(done_ >= total_);
}

void Progress::set_detail(std::string detail) {
  detail_ = std::move(detail);
  stale_ = true;
  // A log line comes at most every kLogLineEvery seconds either way, so a long prefill, which
  // reports its tokens here, still shows in a log between two finished cases.
  draw(false);
}

void Progress::finish() {
  if (finished_) return;
  if (style_ == Style::log_lines) {
    if (drawn_ && stale_) write_log_line(true);
  } else {
    if (stale_ || !drawn_) draw(true);
    if (out_ && drawn_) *out_ << "\n" << std::flush;
  }
  finished_ = true;
}

void Progress::write_log_line(bool force) {
  if (!out_ || finished_) return;
  const double now = clock_();
  if (!force && now - last_draw_ < kLogLineEvery) return;
  last_draw_ = now;
  drawn_ = true;
  stale_ = false;
  *out_ << progress_line(label_, done_, total_, unit_, now - start_, detail_) << "\n" << std::flush;
}

void Progress::draw(bool force) {
  if (style_ == Style::log_lines) {
    write_log_line(false);
    return;
  }
  if (!out_ || finished_) return;
  const double now = clock_();
  if (!force && drawn_ && now - last_draw_ < kRedrawEvery) return;
  last_draw_ = now;
  drawn_ = true;
  stale_ = false;
  // Carriage return, the line, then erase what a longer earlier line left behind.
  *out_ << "\r" << progress_line(label_, done_, total_, unit_, now - start_, detail_) << "\x1b[K"
        << std::flush;
}

}  // namespace cocktail::eval
