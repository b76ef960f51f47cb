// SPDX-License-Identifier: MIT
// The OTLP sink (fieldlog/sinks/otlp_sink.hpp): the caller encodes its record (otlp_encoder.hpp)
// and appends it to the queue; the sink's thread takes the queue whole, sends it in requests of
// batch_size records, and sends a request again after a backoff until the receiver takes it or
// refuses it for good. The queue is two byte arrays reserved
// when the sink is made (the one callers append to, the one being sent), so a record
// allocates nothing on the caller's thread.
#include "fieldlog/sinks/otlp_sink.hpp"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "base/error_reporter.hpp"
#include "base/thread_id.hpp"
#include "otlp_encoder.hpp"
#include "otlp_http.hpp"
#include "sinks/common/sink_io.hpp"

namespace fieldlog {
namespace detail {
namespace {

using Clock = std::chrono::steady_clock;

/// How long a flush after the close deadline waits for the sink's thread to count what it
/// dropped (the request in flight is cut at the deadline).
constexpr auto kCountingGrace = std::chrono::seconds(1);

/// The crash path: how long its requests may take together (the process waits to end), how
/// long it tries the queue's lock (the sink's thread holds it only for moments), and the room
/// for one request's body, reserved when the sink is made.
constexpr std::int64_t kCrashWaitNs = 1'000'000'000;
constexpr std::int64_t kCrashLockWaitNs = 100'000'000;
constexpr std::size_t kCrashBodyRoom = 256 * 1024;

/// A queued record: its logger's name and its LogRecord's sizes, then their bytes.
struct EntryHeader {
    std::uint32_t logger_size;
    std::uint32_t record_size;
};

/// The options as the sink uses them: a batch holds at least one record.
OtlpSinkOptions usable(OtlpSinkOptions options) {
    options.batch_size = std::max<std::size_t>(options.batch_size, 1);
    return options;
}

/// 429 and the gateway errors say "later"; so does no answer at all.
bool retryable(int status) noexcept { return status == 0 || status == 429 || status == 502 || status == 503 || status == 504; }

}  // namespace

/// The queue and the thread that delivers it.
class OtlpDelivery {
public:
    OtlpDelivery(const OtlpSinkOptions& options, OtlpRecordEncoder& encoder, OtlpSink& sink)
        : options_(usable(options)), encoder_(encoder), sink_(sink), http_(options, encoder.content_type()),
          jitter_(std::random_device{}()) {
        incoming_.reserve(options_.queue_bytes);
        sending_.reserve(options_.queue_bytes);
        batch_.reserve(options_.batch_size);
        if (CrashPost* crash = http_.crash_post()) {
            crash->resolve();  // as the UDP and syslog sinks do when made: a crash may come first
            crash_batch_.reserve(options_.batch_size);
            crash_body_.reserve(kCrashBodyRoom);
        }
        thread_ = std::thread([this] { run(); });
    }

    ~OtlpDelivery() { close(); }
    OtlpDelivery(const OtlpDelivery&) = delete;
    OtlpDelivery& operator=(const OtlpDelivery&) = delete;

    /// Queues one encoded record; false when it was dropped (full queue, closed sink).
    bool push(std::string_view logger, std::string_view record) {
        const std::size_t size = sizeof(EntryHeader) + logger.size() + record.size();
        std::unique_lock lock(mutex_);
        // In a forked child the sink's thread stayed in the parent: nothing would send.
        if (past_close() || size > options_.queue_bytes || fork_generation() != fork_at_start_) return overflow();
        while (incoming_.size() + sending_bytes_ + size > options_.queue_bytes) {
            // Closing: no waiting for room, the bound is running.
            if (options_.overflow == OtlpOverflow::drop || closing_) return overflow();
            room_.wait(lock);
        }
        const EntryHeader header{static_cast<std::uint32_t>(logger.size()), static_cast<std::uint32_t>(record.size())};
        const char* h = reinterpret_cast<const char*>(&header);
        incoming_.insert(incoming_.end(), h, h + sizeof header);
        incoming_.insert(incoming_.end(), logger.begin(), logger.end());
        incoming_.insert(incoming_.end(), record.begin(), record.end());
        ++accepted_;
        if (++incoming_records_ == 1) {
            first_queued_ = Clock::now();
            wake_.notify_one();
        } else if (incoming_records_ == options_.batch_size) {
            wake_.notify_one();
        }
        return true;
    }

    /// Waits until every record accepted so far is delivered or dropped, or flush_timeout passed;
    /// once closing, until the close deadline passed and the thread counted what it dropped.
    void flush() {
        std::unique_lock lock(mutex_);
        const std::uint64_t target = accepted_;
        flush_through_ = std::max(flush_through_, target);
        wake_.notify_one();
        const Clock::time_point until = closing_ ? deadline_ + kCountingGrace : Clock::now() + options_.flush_timeout;
        done_changed_.wait_until(lock, until, [&] { return finished_ >= target || stopped_; });
    }

    /// The close deadline begins (once): from now on every record is sent within
    /// shutdown_timeout or dropped and counted then. The thread goes on sending later records.
    std::chrono::milliseconds begin_close() {
        {
            const std::lock_guard lock(mutex_);
            if (!closing_) {
                closing_ = true;
                deadline_ = Clock::now() + options_.shutdown_timeout;
                http_.give_up_at(deadline_);
            }
        }
        wake_.notify_all();
        room_.notify_all();
        return options_.shutdown_timeout;
    }

    /// Sends what is queued, at most shutdown_timeout, then drops and counts the rest; joins.
    void close() {
        begin_close();
        {
            const std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        std::call_once(joined_, [this] {
            if (fork_generation() == fork_at_start_) {
                thread_.join();
            } else {
                thread_.detach();  // the parent's thread: a child has nothing to join
            }
        });
    }

    [[nodiscard]] OtlpSinkStats stats() const {
        const std::lock_guard lock(mutex_);
        return stats_;
    }

    /// The crash path (Sink::write_on_crash): what is queued and not yet delivered, in requests
    /// over a plain socket. A batch the sink's thread is sending may arrive twice. Nothing after
    /// close() began: its bound governs. The queue's lock stays taken: the process ends.
    void send_queue_on_crash() noexcept {
        if (http_.crash_post() == nullptr || fork_generation() != fork_at_start_ || queue_sent_on_crash_) return;
        queue_sent_on_crash_ = true;  // write_on_crash may come again; the lock is ours by then
        const std::int64_t lock_deadline = monotonic_ns() + kCrashLockWaitNs;
        while (!mutex_.try_lock()) {
            if (monotonic_ns() >= lock_deadline) return;  // held by the thread that crashed
            timespec pause{0, 1'000'000};
            ::nanosleep(&pause, nullptr);
        }
        if (closing_) return;
        take_on_crash(sending_, sending_.size() - sending_bytes_);
        take_on_crash(incoming_, 0);
        post_on_crash();
    }

    /// The crash path's `fatal` record: its LogRecord (the encoder's buffers hold it without the
    /// heap) in a request of its own.
    void send_on_crash(std::string_view logger, std::string_view record) noexcept {
        if (http_.crash_post() == nullptr || fork_generation() != fork_at_start_) return;
        add_on_crash(LogRecordBytes{logger, record});
        post_on_crash();
    }

private:
    /// The records in `queue` from byte `from` on, into the crash path's requests.
    void take_on_crash(const std::vector<char>& queue, std::size_t from) noexcept {
        for (std::size_t offset = from; offset + sizeof(EntryHeader) <= queue.size();) {
            EntryHeader header{};
            std::memcpy(&header, queue.data() + offset, sizeof header);
            const char* bytes = queue.data() + offset + sizeof header;
            add_on_crash(LogRecordBytes{std::string_view(bytes, header.logger_size),
                                        std::string_view(bytes + header.logger_size, header.record_size)});
            offset += sizeof header + header.logger_size + header.record_size;
        }
    }

    /// Adds a record to the crash path's next request, sending the one before when it is full;
    /// a record too large for the reserved room alone is passed over.
    void add_on_crash(const LogRecordBytes& record) noexcept {
        const std::span<const LogRecordBytes> alone(&record, 1);
        if (encoder_.request_bound(alone) > crash_body_.capacity()) return;
        if (crash_batch_.size() == crash_batch_.capacity()) post_on_crash();
        crash_batch_.push_back(record);  // within the reserved capacity: no heap
        if (encoder_.request_bound(crash_batch_) <= crash_body_.capacity()) return;
        crash_batch_.pop_back();
        post_on_crash();
        crash_batch_.push_back(record);
    }

    /// Sends the crash path's request; every request shares one deadline, set by the first.
    /// After a request that failed (no receiver, no answer in time) none is tried.
    void post_on_crash() noexcept {
        if (!crash_batch_.empty() && !crash_post_failed_) {
            if (crash_deadline_ns_ == 0) crash_deadline_ns_ = monotonic_ns() + kCrashWaitNs;
            crash_body_.clear();
            encoder_.request(crash_batch_, crash_body_);
            crash_post_failed_ = !http_.crash_post()->post(crash_body_.view(), crash_deadline_ns_);
        }
        crash_batch_.clear();  // also after a failure: the batch stays within its reserved room
    }

    /// The sink takes no more records: close() was called or its deadline passed (mutex_ held).
    [[nodiscard]] bool past_close() const { return stopping_ || (closing_ && Clock::now() >= deadline_); }

    bool overflow() {
        ++stats_.overflowed;
        sink_.count_dropped();
        reporter_.report("otlp", options_.endpoint, "queue", past_close() ? "closed: record dropped" : "full: record dropped");
        return false;
    }

    /// Whether a batch is due: enough records, the first one waited long enough, a flush or close.
    [[nodiscard]] bool due(Clock::time_point now) const {
        if (incoming_records_ == 0) return false;
        return closing_ || incoming_records_ >= options_.batch_size || flush_through_ > taken_ ||
               now >= first_queued_ + options_.linger;
    }

    void run() {
        name_this_thread("fieldlog-otlp");
        std::unique_lock lock(mutex_);
        for (;;) {
            while (!due(Clock::now())) {
                if (stopping_ && incoming_records_ == 0) {
                    stopped_ = true;
                    done_changed_.notify_all();
                    return;
                }
                if (incoming_records_ == 0) {
                    wake_.wait(lock);
                } else {
                    wake_.wait_until(lock, first_queued_ + options_.linger);
                }
            }
            sending_.swap(incoming_);
            const std::size_t records = incoming_records_;
            incoming_records_ = 0;
            incoming_.clear();
            sending_bytes_ = sending_.size();
            taken_ += records;
            lock.unlock();
            send_all(records);
            lock.lock();
            sending_.clear();
        }
    }

    /// Sends the `records` records in sending_, batch_size at a time.
    void send_all(std::size_t records) {
        std::size_t offset = 0;
        while (records > 0) {
            batch_.clear();
            const std::size_t start = offset;
            while (batch_.size() < options_.batch_size && records > 0) {
                EntryHeader header{};
                std::memcpy(&header, sending_.data() + offset, sizeof header);
                const char* bytes = sending_.data() + offset + sizeof header;
                batch_.push_back(LogRecordBytes{std::string_view(bytes, header.logger_size),
                                                std::string_view(bytes + header.logger_size, header.record_size)});
                offset += sizeof header + header.logger_size + header.record_size;
                --records;
            }
            const bool finished = deliver();
            const std::lock_guard lock(mutex_);
            if (!finished) {
                // close() ran out of time: this batch and everything after it are dropped.
                const std::uint64_t left = batch_.size() + records + incoming_records_;
                stats_.expired += left;
                sink_.count_dropped(left);
                incoming_records_ = 0;
                incoming_.clear();
                taken_ = accepted_;
                finished_ = accepted_;
                sending_bytes_ = 0;
                done_changed_.notify_all();
                reporter_.report_final("otlp", options_.endpoint, "close",
                                       std::to_string(left) + " records not delivered within shutdown_timeout, counted dropped");
                return;
            }
            sending_bytes_ -= offset - start;
            finished_ += batch_.size();
            room_.notify_all();
            done_changed_.notify_all();
        }
    }

    /// Sends batch_ until the receiver takes it or refuses it for good (true), or close() runs out
    /// of time (false).
    bool deliver() {
        if (CrashPost* crash = http_.crash_post()) crash->resolve();  // a name that did not resolve before
        body_.clear();
        encoder_.request(batch_, body_);
        const std::string_view body = body_.view();
        std::chrono::milliseconds backoff = options_.retry_initial;
        for (;;) {
            std::chrono::milliseconds timeout = options_.timeout;
            if (const std::optional<Clock::duration> left = time_left()) {
                if (*left <= Clock::duration::zero()) return false;
                timeout = std::min(timeout, std::chrono::ceil<std::chrono::milliseconds>(*left));
            }
            const HttpResult result = http_.post(body, timeout);
            if (result.status >= 200 && result.status < 300) {
                const std::int64_t rejected = std::clamp<std::int64_t>(encoder_.rejected_records(result.body), 0,
                                                                        static_cast<std::int64_t>(batch_.size()));
                const std::lock_guard lock(mutex_);
                ++stats_.requests;
                stats_.records += batch_.size();
                if (rejected > 0) {
                    stats_.rejected += static_cast<std::uint64_t>(rejected);
                    sink_.count_dropped(static_cast<std::uint64_t>(rejected));
                    report("partial success", std::to_string(rejected) + " records rejected");
                }
                return true;
            }
            if (!retryable(result.status)) {
                {
                    const std::lock_guard lock(mutex_);
                    stats_.refused += batch_.size();
                }
                sink_.count_dropped(batch_.size());
                sink_.count_error();
                report("POST", "HTTP " + std::to_string(result.status) + ": " + std::to_string(batch_.size()) +
                                   " records dropped");
                return true;
            }
            if (result.status == 0) {
                sink_.count_error();
                report("POST", result.error);
            }
            std::chrono::milliseconds wait = result.retry_after;
            if (wait.count() < 0) {
                // Full jitter around the backoff: from half to one and a half of it.
                std::uniform_int_distribution<long long> spread(backoff.count() / 2, backoff.count() * 3 / 2);
                wait = std::chrono::milliseconds(spread(jitter_));
                backoff = std::min(backoff * 2, options_.retry_max);
            }
            std::unique_lock lock(mutex_);
            ++stats_.retries;
            const Clock::time_point until = Clock::now() + wait;
            // close() wakes the wait and bounds it by its deadline.
            for (;;) {
                const Clock::time_point limit = closing_ ? std::min(until, deadline_) : until;
                if (Clock::now() >= limit) break;
                wake_.wait_until(lock, limit);
            }
            if (closing_ && Clock::now() >= deadline_) return false;
        }
    }

    /// The time close() has left, if it runs.
    std::optional<Clock::duration> time_left() {
        const std::lock_guard lock(mutex_);
        if (!closing_) return std::nullopt;
        return deadline_ - Clock::now();
    }

    void report(std::string_view operation, std::string_view reason) {
        reporter_.report("otlp", options_.endpoint, operation, reason);
    }

    const OtlpSinkOptions options_;
    OtlpRecordEncoder& encoder_;
    OtlpSink& sink_;
    OtlpHttpClient http_;
    std::mt19937_64 jitter_;
    ErrorReporter reporter_;

    mutable std::mutex mutex_;
    std::condition_variable wake_;          ///< the sink's thread: records, a flush, close()
    std::condition_variable room_;          ///< blocked callers: room in the queue
    std::condition_variable done_changed_;  ///< flush(): records finished
    std::vector<char> incoming_;            ///< records callers appended, waiting
    std::size_t incoming_records_ = 0;
    Clock::time_point first_queued_{};
    std::vector<char> sending_;  ///< the records being sent (the sink's thread's, unlocked)
    std::size_t sending_bytes_ = 0;  ///< of those, the bytes not yet delivered or dropped
    std::uint64_t accepted_ = 0;  ///< records pushed, ever
    std::uint64_t taken_ = 0;     ///< of those, records moved to sending_
    std::uint64_t finished_ = 0;  ///< of those, records delivered or dropped
    std::uint64_t flush_through_ = 0;
    bool closing_ = false;   ///< the close deadline runs
    bool stopping_ = false;  ///< close(): the thread ends once nothing is queued
    bool stopped_ = false;
    Clock::time_point deadline_{};
    OtlpSinkStats stats_{};

    std::vector<LogRecordBytes> batch_;  ///< the sink's thread's
    Buffer body_;
    std::vector<LogRecordBytes> crash_batch_;  ///< the crash path's, reserved
    Buffer crash_body_;
    std::int64_t crash_deadline_ns_ = 0;
    bool queue_sent_on_crash_ = false;
    bool crash_post_failed_ = false;
    const std::uint64_t fork_at_start_ = fork_generation();
    std::thread thread_;
    std::once_flag joined_;
};

}  // namespace detail

std::shared_ptr<OtlpSink> make_otlp_sink(const OtlpSinkOptions& options) {
    return std::make_shared<OtlpSink>(options, detail::make_otlp_encoder(options));
}

OtlpSink::OtlpSink(const OtlpSinkOptions& options, std::unique_ptr<detail::OtlpRecordEncoder> encoder)
    : encoder_(std::move(encoder)), target_(options.endpoint) {
    delivery_ = std::make_unique<detail::OtlpDelivery>(options, *encoder_, *this);
}

OtlpSink::~OtlpSink() { close(); }

void OtlpSink::write(const RecordView& record) { delivery_->push(record.logger, encoder_->log_record(record)); }

void OtlpSink::flush() { delivery_->flush(); }

void OtlpSink::write_on_crash(std::span<const RecordView> records) noexcept {
    delivery_->send_queue_on_crash();
    for (const RecordView& record : records) {
        std::string_view log_record;
        try {
            log_record = encoder_->log_record(record);
        } catch (...) {
            continue;
        }
        delivery_->send_on_crash(record.logger, log_record);
    }
}

SinkInfo OtlpSink::info() const {
    return SinkInfo{.kind = "otlp", .target = target_, .format = Format::otel, .lines = false};
}

void OtlpSink::close() { delivery_->close(); }

std::chrono::milliseconds OtlpSink::begin_close() { return delivery_->begin_close(); }

OtlpSinkStats OtlpSink::stats() const { return delivery_->stats(); }

namespace {

std::string_view trimmed(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

/// `%XX` escapes decoded, as the specification's header lists have them (W3C Baggage's form);
/// nullopt at a '%' without two hex digits after it.
std::optional<std::string> percent_decoded(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            out += s[i];
            continue;
        }
        unsigned value = 0;
        if (i + 2 >= s.size() || std::from_chars(s.data() + i + 1, s.data() + i + 3, value, 16).ptr != s.data() + i + 3) {
            return std::nullopt;
        }
        out += static_cast<char>(value);
        i += 2;
    }
    return out;
}

/// Applies the first of `names` (the logs-specific variable before the generic one) that is set
/// and well formed: `apply(value)` takes it and returns "", or returns why it cannot. A malformed
/// one is ignored, as the specification asks of an SDK (treated as unset, so the next is tried),
/// and said on stderr. An empty variable counts as unset. True when one was applied.
template <typename Apply>
bool apply_variable(std::initializer_list<const char*> names, Apply&& apply) {
    for (const char* name : names) {
        const char* value = std::getenv(name);
        if (value == nullptr || *value == '\0') continue;
        const std::string why = apply(std::string_view(value));
        if (why.empty()) return true;
        detail::report_unlimited(name, fmt::format("\"{}\" {}; the variable is ignored", value, why));
    }
    return false;
}

/// …_HEADERS' `k=v,k2=v2`: keys and values trimmed, values percent-decoded, empty entries
/// skipped; nullopt (with `why`) for an entry without a key and '='.
std::optional<std::vector<std::pair<std::string, std::string>>> parse_headers(std::string_view rest, std::string& why) {
    std::vector<std::pair<std::string, std::string>> parsed;
    while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        const std::string_view entry = trimmed(rest.substr(0, comma));
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        if (entry.empty()) continue;
        const std::size_t equals = entry.find('=');
        if (equals == std::string_view::npos || trimmed(entry.substr(0, equals)).empty()) {
            why = "has \"" + std::string(entry) + "\", not name=value";
            return std::nullopt;
        }
        std::optional<std::string> value = percent_decoded(trimmed(entry.substr(equals + 1)));
        if (!value) {
            why = "has a '%' not followed by two hex digits (a ',' in a value is %2C)";
            return std::nullopt;
        }
        parsed.emplace_back(std::string(trimmed(entry.substr(0, equals))), std::move(*value));
    }
    return parsed;
}

}  // namespace

OtlpSinkOptions& OtlpSinkOptions::apply_env() {
    const auto set_endpoint = [&](std::string url) {
        std::string problem = detail::endpoint_problem(url);
        if (problem.empty()) endpoint = std::move(url);
        return problem.empty() ? problem : "is no endpoint: " + problem;
    };
    const bool logs_endpoint = apply_variable({"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"}, [&](std::string_view url) {
        return set_endpoint(std::string(url));
    });
    if (!logs_endpoint) {
        apply_variable({"OTEL_EXPORTER_OTLP_ENDPOINT"}, [&](std::string_view base) {
            while (!base.empty() && base.back() == '/') base.remove_suffix(1);
            return set_endpoint(std::string(base) + "/v1/logs");
        });
    }
    apply_variable({"OTEL_EXPORTER_OTLP_LOGS_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"}, [&](std::string_view list) {
        std::string why;
        if (auto parsed = parse_headers(list, why)) headers = std::move(*parsed);
        return why;
    });
    apply_variable({"OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"}, [&](std::string_view protocol) {
        if (protocol != "http/protobuf" && protocol != "http/json") {
            return std::string("is not a protocol fieldlog speaks: http/protobuf or http/json");
        }
        encoding = protocol == "http/json" ? OtlpEncoding::json : OtlpEncoding::protobuf;
        return std::string();
    });
    apply_variable({"OTEL_EXPORTER_OTLP_LOGS_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"}, [&](std::string_view text) {
        long long ms = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), ms);
        if (error != std::errc() || end != text.data() + text.size() || ms < 0) {
            return std::string("is not a number of milliseconds (0: no limit)");
        }
        // 0 is no limit, as the specification says; the longest 32-bit count stands for it.
        timeout = std::chrono::milliseconds(ms == 0 ? std::numeric_limits<std::int32_t>::max() : ms);
        return std::string();
    });
    apply_variable({"OTEL_EXPORTER_OTLP_LOGS_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"}, [&](std::string_view name) {
        if (name != "gzip" && name != "none") return std::string("is not a compression fieldlog has: gzip or none");
        compression = name == "gzip" ? OtlpCompression::gzip : OtlpCompression::none;
        return std::string();
    });
    return *this;
}

}  // namespace fieldlog
