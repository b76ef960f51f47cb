// SPDX-License-Identifier: MIT
// End-to-end tests of the example service (examples/http_service): each test starts the real
// binary on an ephemeral loopback port with its own configuration, talks HTTP to it with
// cpp-httplib clients from 8 threads, ends it with a signal, and reads what it logged (checked
// by the strict JSON-lines checker first, then read with the service's own flat JSON reader).
// Its own binary (see tests/CMakeLists.txt): built with the examples it starts.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <httplib.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "flat_json.hpp"
#include "support/test_support.hpp"
#include "transactions.hpp"

extern char** environ;

namespace {

using namespace std::chrono_literals;
using http_service::JsonMember;

constexpr int kClientThreads = 8;

// ---- reading records -------------------------------------------------------------------------

/// One log line as (key, value text) pairs in line order.
struct Record {
    std::vector<std::pair<std::string, std::string>> members;

    [[nodiscard]] bool has(const std::string& key) const {
        for (const auto& [k, v] : members) {
            if (k == key) return true;
        }
        return false;
    }
    [[nodiscard]] std::string get(const std::string& key) const {
        for (const auto& [k, v] : members) {
            if (k == key) return v;
        }
        return {};
    }
};

/// Every record in `path`, after the strict checker passed the whole file.
std::vector<Record> read_records(const std::string& path) {
    INFO(path);
    REQUIRE(std::filesystem::exists(path));
    REQUIRE(fieldlog_test::jsonl_file_errors(path).empty());
    std::vector<Record> records;
    std::array<JsonMember, 32> members;
    for (const std::string& line : fieldlog_test::read_lines(path)) {
        std::vector<char> scratch(line.size() + 1);
        const http_service::FlatObject object = http_service::parse_flat_object(line, members, scratch);
        INFO(line);
        REQUIRE(object.ok());
        Record r;
        for (std::size_t i = 0; i < object.size; ++i) r.members.emplace_back(members[i].key, members[i].text);
        records.push_back(std::move(r));
    }
    return records;
}

// ---- the service process ---------------------------------------------------------------------

/// A configuration logging JSON at level info, asynchronously, to one file.
std::string file_config(const std::string& log_path) {
    return fmt::format("level = \"info\"\nformat = \"json\"\ntimezone = \"UTC\"\n[async]\nenabled = true\n"
                       "[[sinks]]\ntype = \"file\"\npath = \"{}\"\n",
                       log_path);
}

void write_file(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp";
    std::ofstream(tmp) << text;
    std::filesystem::rename(tmp, path);  // a reload never reads a half-written file
}

/// fieldlog_http_service started with `args` plus --port=0 and a port file; killed if a test
/// leaves it running.
class ServiceProcess {
public:
    ServiceProcess(const fieldlog_test::TempDir& dir, std::vector<std::string> args) {
        const std::string port_file = dir.file("port");
        args.insert(args.begin(), FIELDLOG_HTTP_SERVICE);
        args.emplace_back("--port=0");
        args.emplace_back("--port-file=" + port_file);
        args.emplace_back("--threads=" + std::to_string(kClientThreads + 2));
        std::vector<char*> argv;
        for (std::string& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        // The test's own FIELDLOG_* variables must not change the service's configuration.
        std::vector<char*> env;
        for (char** e = environ; *e != nullptr; ++e) {
            if (std::string_view(*e).rfind("FIELDLOG_", 0) != 0) env.push_back(*e);
        }
        env.push_back(nullptr);
        REQUIRE(::posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), env.data()) == 0);

        const auto deadline = std::chrono::steady_clock::now() + 20s;
        while (!std::filesystem::exists(port_file)) {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                FAIL("the service exited before listening (status " << status << ")");
            }
            REQUIRE(std::chrono::steady_clock::now() < deadline);
            std::this_thread::sleep_for(5ms);
        }
        std::ifstream(port_file) >> port_;
        REQUIRE(port_ > 0);
    }
    ~ServiceProcess() { kill(); }
    ServiceProcess(const ServiceProcess&) = delete;
    ServiceProcess& operator=(const ServiceProcess&) = delete;

    [[nodiscard]] int port() const noexcept { return port_; }
    void signal(int signo) const { REQUIRE(::kill(pid_, signo) == 0); }
    /// SIGKILL, when a test gives up on it.
    void kill() noexcept {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }

    /// Waits (at most 60 s) for the process to end; returns its wait status.
    int wait() {
        const auto deadline = std::chrono::steady_clock::now() + 60s;
        int status = 0;
        while (::waitpid(pid_, &status, WNOHANG) != pid_) {
            if (std::chrono::steady_clock::now() > deadline) FAIL("the service did not exit");
            std::this_thread::sleep_for(10ms);
        }
        pid_ = -1;
        return status;
    }

    /// SIGTERM, then the process must drain and exit with status 0.
    void terminate() {
        signal(SIGTERM);
        const int status = wait();
        REQUIRE(WIFEXITED(status));
        REQUIRE(WEXITSTATUS(status) == 0);
    }

private:
    pid_t pid_ = -1;
    int port_ = 0;
};

// ---- clients ---------------------------------------------------------------------------------

enum class Kind { transaction, invalid, health, no_id };

/// One request a client made and what came back.
struct Exchange {
    Kind kind = Kind::transaction;
    std::string request_id;      ///< sent, or (no_id) read from the reply's X-Request-ID
    double amount = 0;           ///< unique per transaction
    std::string transaction_id;  ///< from the reply
    int status = 0;              ///< 0: no reply
};

httplib::Client make_client(int port) {
    httplib::Client client("127.0.0.1", port);
    client.set_keep_alive(true);
    client.set_tcp_nodelay(true);  // headers and body are two writes: no Nagle wait for the ACK between
    client.set_connection_timeout(5);
    client.set_read_timeout(20);
    return client;
}

/// Makes request number `i` of client thread `t`: mostly transactions, some invalid bodies,
/// health checks and transactions without an X-Request-ID.
Exchange exchange(httplib::Client& client, int t, int i) {
    Exchange e;
    e.kind = i % 10 == 3 ? Kind::invalid : i % 10 == 6 ? Kind::health : i % 10 == 8 ? Kind::no_id : Kind::transaction;
    e.request_id = fmt::format("t{}-r{}", t, i);
    e.amount = 1 + t * 100000 + i + 0.25;
    httplib::Headers headers;
    if (e.kind != Kind::no_id) headers.emplace("X-Request-ID", e.request_id);
    auto send = [&]() -> httplib::Result {
        switch (e.kind) {
            case Kind::health: return client.Get("/healthz", headers);
            case Kind::invalid:
                return client.Post("/transactions", headers,
                                   R"({"account":"acc","amount":-1,"currency":"EUR","merchant":"m"})", "application/json");
            default:
                return client.Post("/transactions", headers,
                                   fmt::format(R"({{"account":"acc-{}","amount":{},"currency":"EUR","merchant":"m-{}"}})",
                                               t, e.amount, i),
                                   "application/json");
        }
    };
    const httplib::Result res = send();
    if (!res) return e;
    e.status = res->status;
    if (e.kind == Kind::no_id) e.request_id = res->get_header_value("X-Request-ID");
    if (e.status == 202) {
        std::array<JsonMember, 8> members;
        std::array<char, 256> scratch;
        const auto reply = http_service::parse_flat_object(res->body, members, scratch);
        if (reply.ok()) {
            if (const JsonMember* id = http_service::find_member({members.data(), reply.size}, "transaction_id")) {
                e.transaction_id = std::string(id->text);
            }
        }
    }
    return e;
}

/// `per_thread` requests from each of 8 threads; with `until_failure`, each thread instead goes
/// on until its first request without a reply (the service stopped) and `answered` counts replies.
std::vector<Exchange> load(int port, int per_thread, bool until_failure = false, std::atomic<int>* answered = nullptr) {
    std::vector<std::vector<Exchange>> results(kClientThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kClientThreads; ++t) {
        threads.emplace_back([&, t] {
            httplib::Client client = make_client(port);
            for (int i = 0; until_failure || i < per_thread; ++i) {
                Exchange e = exchange(client, t, i);
                const bool replied = e.status != 0;
                if (replied && answered != nullptr) answered->fetch_add(1);
                results[static_cast<std::size_t>(t)].push_back(std::move(e));
                if (!replied && until_failure) break;
            }
        });
    }
    for (std::thread& t : threads) t.join();
    std::vector<Exchange> all;
    for (auto& r : results) all.insert(all.end(), r.begin(), r.end());
    return all;
}

void wait_until(const std::atomic<int>& counter, int target) {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (counter.load() < target) {
        REQUIRE(std::chrono::steady_clock::now() < deadline);
        std::this_thread::sleep_for(5ms);
    }
}

/// 8 clients sending from a background thread until the service stops answering. When a test
/// fails before finish(), the service is killed so that the clients stop and can be joined.
class BackgroundLoad {
public:
    explicit BackgroundLoad(ServiceProcess& service)
        : service_(service), thread_([this] { exchanges_ = load(service_.port(), 0, true, &answered_); }) {}
    ~BackgroundLoad() {
        if (thread_.joinable()) {
            service_.kill();
            thread_.join();
        }
    }
    BackgroundLoad(const BackgroundLoad&) = delete;
    BackgroundLoad& operator=(const BackgroundLoad&) = delete;

    /// Waits until `n` requests in all were answered.
    void wait_for(int n) const { wait_until(answered_, n); }
    [[nodiscard]] int answered() const noexcept { return answered_.load(); }
    /// Joins the clients (after the service stopped) and returns what they did.
    std::vector<Exchange> finish() {
        thread_.join();
        return std::move(exchanges_);
    }

private:
    ServiceProcess& service_;
    std::atomic<int> answered_{0};
    std::vector<Exchange> exchanges_;
    std::thread thread_;
};

// ---- checking records against exchanges ------------------------------------------------------

bool lifecycle(const Record& r) {
    const std::string msg = r.get("msg");
    return msg == "listening" || msg == "stopping" || msg == "stopped";
}

/// Records grouped by request_id; every record other than the lifecycle ones must have one.
std::map<std::string, std::vector<Record>> by_request(const std::vector<Record>& records) {
    std::map<std::string, std::vector<Record>> grouped;
    for (const Record& r : records) {
        if (lifecycle(r)) {
            CHECK_FALSE(r.has("request_id"));
            continue;
        }
        INFO("record without a request id: " << r.get("msg"));
        REQUIRE(r.has("request_id"));
        grouped[r.get("request_id")].push_back(r);
    }
    return grouped;
}

/// The records of one answered exchange are exactly what its kind logs, each with its own
/// request's scope fields and values (a leaked scope would bring another request's id here, or
/// leave this one's records under another id).
void check_request(const Exchange& e, const std::vector<Record>& records) {
    INFO("request " << e.request_id << " status " << e.status);
    std::multiset<std::string> messages;
    for (const Record& r : records) {
        messages.insert(r.get("msg"));
        CHECK(r.get("method") == (e.kind == Kind::health ? "GET" : "POST"));
        CHECK(r.get("path") == (e.kind == Kind::health ? "/healthz" : "/transactions"));
        CHECK(r.get("remote_addr") == "127.0.0.1");
        const std::string msg = r.get("msg");
        if (msg == "transaction accepted") {
            CHECK(std::stod(r.get("amount")) == e.amount);
            CHECK(r.get("transaction_id") == e.transaction_id);
        } else if (msg == "transaction settled") {
            CHECK(r.get("transaction_id") == e.transaction_id);  // logged on a worker thread
        } else if (msg == "request done") {
            CHECK(r.get("status") == std::to_string(e.status));
            CHECK(r.has("latency_us"));
        }
    }
    switch (e.kind) {
        case Kind::transaction:
        case Kind::no_id:
            CHECK(e.status == 202);
            CHECK(messages == std::multiset<std::string>{"transaction accepted", "transaction settled", "request done"});
            break;
        case Kind::invalid:
            CHECK(e.status == 400);
            CHECK(messages == std::multiset<std::string>{"transaction rejected", "request done"});
            break;
        case Kind::health:
            CHECK(e.status == 200);
            CHECK(messages == std::multiset<std::string>{"request done"});
            break;
    }
}

/// Every answered exchange has exactly its records; there are no records of other requests
/// except those of requests still in flight when the service stopped (`allow_unanswered`).
void check_log(const std::vector<Exchange>& exchanges, const std::vector<Record>& records, bool allow_unanswered) {
    const auto grouped = by_request(records);
    std::size_t answered = 0;
    std::set<std::string> ids;
    for (const Exchange& e : exchanges) {
        if (e.status == 0) continue;
        ++answered;
        REQUIRE_FALSE(e.request_id.empty());
        CHECK(ids.insert(e.request_id).second);
        const auto found = grouped.find(e.request_id);
        INFO("request " << e.request_id);
        REQUIRE(found != grouped.end());
        check_request(e, found->second);
    }
    std::size_t access_records = 0;
    for (const auto& [id, list] : grouped) {
        for (const Record& r : list) access_records += r.get("msg") == "request done" ? 1 : 0;
    }
    if (allow_unanswered) {
        CHECK(access_records >= answered);
    } else {
        CHECK(access_records == answered);
        CHECK(grouped.size() == answered);
    }
}

/// The value of the sample `name` (with its labels, as written) in exposition text, or -1.
double sample(const std::string& text, const std::string& name) {
    std::size_t at = 0;
    while ((at = text.find(name + ' ', at)) != std::string::npos) {
        if (at == 0 || text[at - 1] == '\n') return std::stod(text.substr(at + name.size() + 1));
        at += name.size();
    }
    return -1;
}

std::string scrape(int port) {
    httplib::Client client = make_client(port);
    const auto res = client.Get("/metrics");
    REQUIRE(res);
    REQUIRE(res->status == 200);
    CHECK(res->get_header_value("Content-Type").rfind("text/plain; version=0.0.4", 0) == 0);
    return res->body;
}

}  // namespace

TEST_CASE("A transaction body is read strictly, and valid bodies give their fields", "[http_service]") {
    struct Case {
        const char* name;
        std::string_view body;
        std::string_view error;  // "" when valid
    };
    const Case cases[] = {
        {"plain", R"({"account":"acc-1","amount":12.5,"currency":"EUR","merchant":"m-1"})", ""},
        {"whitespace and extra keys", " {\n \"note\" : null, \"account\":\"a\",\"amount\":1e2,\"currency\":\"USD\",\"merchant\":\"m\",\"x\":true } ", ""},
        {"not an object", R"(["account"])", "expected a JSON object"},
        {"nested", R"({"account":{"id":1},"amount":1,"currency":"EUR","merchant":"m"})", "nested objects and arrays are not accepted"},
        {"missing amount", R"({"account":"a","currency":"EUR","merchant":"m"})", "account, merchant, currency and amount are required"},
        {"amount zero", R"({"account":"a","amount":0,"currency":"EUR","merchant":"m"})", "amount must be more than 0 and at most 1000000"},
        {"amount a string", R"({"account":"a","amount":"5","currency":"EUR","merchant":"m"})", "amount must be one number"},
        {"lower-case currency", R"({"account":"a","amount":1,"currency":"eur","merchant":"m"})", "currency must be 3 upper-case letters"},
        {"duplicate key", R"({"account":"a","account":"b","amount":1,"currency":"EUR","merchant":"m"})", "account must be one string"},
        {"leading zero", R"({"account":"a","amount":01,"currency":"EUR","merchant":"m"})", "a number may not start with 0"},
        {"invalid UTF-8", "{\"account\":\"a\xff\",\"amount\":1,\"currency\":\"EUR\",\"merchant\":\"m\"}", "invalid UTF-8"},
        {"overlong UTF-8", "{\"account\":\"\xc0\xaf\",\"amount\":1,\"currency\":\"EUR\",\"merchant\":\"m\"}", "invalid UTF-8"},
        {"lone surrogate", R"({"account":"\ud800","amount":1,"currency":"EUR","merchant":"m"})", "unpaired surrogate"},
        {"raw control character", "{\"account\":\"a\nb\",\"amount\":1,\"currency\":\"EUR\",\"merchant\":\"m\"}", "control character in a string"},
        {"trailing text", R"({"account":"a","amount":1,"currency":"EUR","merchant":"m"} x)", "unexpected text after the object"},
        {"unterminated", R"({"account":"a)", "unterminated string"},
        {"empty account", R"({"account":"","amount":1,"currency":"EUR","merchant":"m"})", "account must have 1 to 64 bytes"},
    };
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.name) {
            std::array<char, 256> scratch;
            http_service::Transaction tx;
            CHECK(http_service::parse_transaction(c.body, tx, scratch) == c.error);
        }
    }

    SECTION("escapes are decoded, surrogate pairs included") {
        std::array<char, 256> scratch;
        http_service::Transaction tx;
        REQUIRE(http_service::parse_transaction(
                    R"({"account":"a\"b\\c\/d\u00e9\ud83d\ude00","amount":0.01,"currency":"JPY","merchant":"\tm"})", tx,
                    scratch)
                    .empty());
        CHECK(tx.account == "a\"b\\c/d\xc3\xa9\xf0\x9f\x98\x80");
        CHECK(tx.merchant == "\tm");
        CHECK(tx.currency == "JPY");
        CHECK(tx.amount == 0.01);
    }
    SECTION("a string that outgrows the scratch buffer is an error, not an overflow") {
        std::array<char, 4> scratch;
        http_service::Transaction tx;
        CHECK(http_service::parse_transaction(R"({"account":"\u0041bcdefgh","amount":1,"currency":"EUR","merchant":"m"})",
                                              tx, scratch) == "string too long");
    }
    SECTION("the fee is 1.5 % in cents, at least 5") {
        CHECK(http_service::fee_cents(100) == 150);
        CHECK(http_service::fee_cents(12.34) == 19);
        CHECK(http_service::fee_cents(0.01) == 5);
    }
}

TEST_CASE("Every record of a request carries that request's id and no other, across 8 client threads and the "
          "worker pool", "[http_service]") {
    fieldlog_test::TempDir dir;
    const std::string log_path = dir.file("service.log");
    write_file(dir.file("fieldlog.toml"), file_config(log_path));
    ServiceProcess service(dir, {"--config=" + dir.file("fieldlog.toml"), "--work-threads=2"});

    const std::vector<Exchange> exchanges = load(service.port(), 150);
    service.terminate();

    for (const Exchange& e : exchanges) REQUIRE(e.status != 0);  // nothing was cut off here
    const std::vector<Record> records = read_records(log_path);
    check_log(exchanges, records, false);
    // The three lifecycle records, and one access record per request.
    CHECK(std::count_if(records.begin(), records.end(), lifecycle) == 3);
}

TEST_CASE("GET /metrics passes promtool's check and its counters match what the service logged", "[http_service]") {
    fieldlog_test::TempDir dir;
    const std::string log_path = dir.file("service.log");
    write_file(dir.file("fieldlog.toml"), file_config(log_path));
    ServiceProcess service(dir, {"--config=" + dir.file("fieldlog.toml")});

    const std::vector<Exchange> exchanges = load(service.port(), 50);
    int transactions = 0;
    int invalid = 0;
    int health = 0;
    for (const Exchange& e : exchanges) {
        REQUIRE(e.status != 0);
        transactions += e.status == 202 ? 1 : 0;
        invalid += e.status == 400 ? 1 : 0;
        health += e.status == 200 ? 1 : 0;
    }
    REQUIRE(transactions + invalid + health == kClientThreads * 50);

    // Settlement runs after the reply, and the async writer after the call: wait for both. Each
    // scrape logs an access record too, after it is rendered: those of the earlier scrapes count.
    const int requests_records = 1 + 3 * transactions + 2 * invalid + health;  // "listening" + each request's
    std::string text;
    double records = 0;
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    for (;;) {
        text = scrape(service.port());
        const double scrapes = std::max(0.0, sample(text, R"(http_service_requests_total{route="/metrics",code="200"})"));
        records = requests_records + scrapes;
        if (sample(text, "http_service_transactions_settled_total") == transactions &&
            sample(text, "fieldlog_sink_records_total{sink=\"file:" + log_path + "\",kind=\"file\",target=\"" + log_path +
                             "\"}") == records) {
            break;
        }
        REQUIRE(std::chrono::steady_clock::now() < deadline);
        std::this_thread::sleep_for(50ms);
    }
    INFO(text);

    if (std::system("command -v promtool >/dev/null 2>&1") == 0) {
        const std::string metrics_file = dir.file("metrics.txt");
        std::ofstream(metrics_file) << text;
        const std::string command = "promtool check metrics < " + metrics_file + " 2>&1";
        std::FILE* out = ::popen(command.c_str(), "r");
        REQUIRE(out != nullptr);
        std::string report;
        std::array<char, 512> chunk;
        while (std::fgets(chunk.data(), chunk.size(), out) != nullptr) report += chunk.data();
        const int status = ::pclose(out);
        INFO("promtool: " << report);
        CHECK(status == 0);
    } else {
        WARN("promtool is not installed (Debian package prometheus): the exposition format was not checked by it");
    }

    CHECK(sample(text, R"(http_service_requests_total{route="/transactions",code="202"})") == transactions);
    CHECK(sample(text, R"(http_service_requests_total{route="/transactions",code="400"})") == invalid);
    CHECK(sample(text, R"(http_service_requests_total{route="/healthz",code="200"})") == health);
    // The scrapes made while waiting were answered too; the one being answered is not counted yet.
    const double answered = sample(text, "http_service_request_duration_seconds_count");
    CHECK(answered >= transactions + invalid + health);
    CHECK(sample(text, R"(http_service_request_duration_seconds_bucket{le="+Inf"})") == answered);
    CHECK(sample(text, R"(fieldlog_records_total{level="info"})") == records - invalid);
    CHECK(sample(text, R"(fieldlog_records_total{level="warn"})") == invalid);
    CHECK(sample(text, R"(fieldlog_records_total{level="debug"})") == 0);  // below the configured level
    CHECK(sample(text, "http_service_log_records_total") == records);
    CHECK(sample(text, "fieldlog_async_dropped_records_total") == 0);
    CHECK(sample(text, R"(http_service_build_info{logger="fieldlog"})") == 1);
    service.terminate();
}

TEST_CASE("SIGTERM during load: every answered request's records are on disk after the service exits",
          "[http_service]") {
    for (const std::string logger : {"fieldlog", "spdlog"}) {
        DYNAMIC_SECTION(logger) {
            fieldlog_test::TempDir dir;
            const std::string log_path = dir.file("service.log");
            write_file(dir.file("fieldlog.toml"), file_config(log_path));
            ServiceProcess service(dir, {"--logger=" + logger, "--config=" + dir.file("fieldlog.toml"),
                                         "--log-file=" + log_path});
            BackgroundLoad clients(service);
            clients.wait_for(400);
            service.terminate();  // while the clients are still sending
            const std::vector<Exchange> exchanges = clients.finish();

            check_log(exchanges, read_records(log_path), true);
        }
    }
}

TEST_CASE("SIGHUP with a changed configuration moves the records to the new sink without losing one",
          "[http_service]") {
    fieldlog_test::TempDir dir;
    const std::string first = dir.file("first.log");
    const std::string second = dir.file("second.log");
    const std::string config = dir.file("fieldlog.toml");
    write_file(config, file_config(first));
    ServiceProcess service(dir, {"--config=" + config});

    BackgroundLoad clients(service);
    clients.wait_for(300);
    write_file(config, file_config(second));
    service.signal(SIGHUP);
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (!std::filesystem::exists(second) || std::filesystem::file_size(second) == 0) {
        REQUIRE(std::chrono::steady_clock::now() < deadline);
        std::this_thread::sleep_for(5ms);
    }
    clients.wait_for(clients.answered() + 300);
    service.terminate();
    const std::vector<Exchange> exchanges = clients.finish();

    std::vector<Record> records = read_records(first);
    const std::size_t in_first = records.size();
    const std::vector<Record> after = read_records(second);
    records.insert(records.end(), after.begin(), after.end());
    CHECK(in_first > 0);
    CHECK(after.size() > 0);
    check_log(exchanges, records, true);  // each answered request's records exactly once, in one file or the other
}

TEST_CASE("With spdlog, and with fieldlog's with() children, the service writes the same lines as with a Scope, "
          "apart from times and ids",
          "[http_service]") {
    // The comparison in load.sh is only fair if every setup writes the same bytes per request.
    auto run = [](const std::string& logger, const std::string& context = "scope") {
        fieldlog_test::TempDir dir;
        const std::string log_path = dir.file("service.log");
        write_file(dir.file("fieldlog.toml"), file_config(log_path));
        ServiceProcess service(dir, {"--logger=" + logger, "--context=" + context,
                                     "--config=" + dir.file("fieldlog.toml"), "--log-file=" + log_path});
        {
            httplib::Client client = make_client(service.port());
            const httplib::Headers id{{"X-Request-ID", "fixed-1"}};
            REQUIRE(client.Post("/transactions", id,
                                R"({"account":"acc \"q\" \u00e9\u0001","amount":12.5,"currency":"EUR","merchant":"m\\n"})",
                                "application/json"));
            REQUIRE(client.Post("/transactions", id, R"({"amount":1})", "application/json"));
            REQUIRE(client.Get("/healthz", id));
            REQUIRE(client.Get("/no/such/path", id));
        }  // closes the connection: the service need not wait out its keep-alive time
        service.terminate();
        // The raw lines, checked, with what differs by nature masked: the time, the latency, the
        // generated transaction id, the logger's name, the port and the trace position (a new trace
        // per request); sorted, since settlement runs on another thread.
        read_records(log_path);
        std::multiset<std::string> lines;
        for (std::string line : fieldlog_test::read_lines(log_path)) {
            for (const std::string key :
                 {"\"ts\":", "\"latency_us\":", "\"transaction_id\":", "\"logging\":", "\"port\":",
                  "\"trace_id\":", "\"span_id\":"}) {
                const std::size_t at = line.find(key);
                if (at == std::string::npos) continue;
                const std::size_t start = at + key.size();
                const std::size_t end = line.find_first_of(",}", start);  // these values hold neither
                std::string masked(line, 0, start);
                masked += '*';
                masked.append(line, end);
                line = std::move(masked);
            }
            lines.insert(line);
        }
        return lines;
    };
    const auto fieldlog_lines = run("fieldlog");
    const auto spdlog_lines = run("spdlog");
    const auto with_lines = run("fieldlog", "with");
    CHECK(fieldlog_lines.size() == 10);  // listening, 3 + 2 + 1 + 1 records of the requests, stopping, stopped
    CHECK(fieldlog_lines == spdlog_lines);
    CHECK(with_lines == fieldlog_lines);
}

TEST_CASE("GET and PUT /loglevel read and change the levels while the service runs", "[http_service]") {
    // transactions' "transaction parsed" is a debug record: at info it is not written.
    struct Case {
        std::string logger;
        std::string raise;     // what PUT sends to turn it on
        std::string raised;    // what GET answers afterwards
        std::string rejected;  // a PUT that must change nothing
    };
    for (const Case& c : {Case{"fieldlog", "info,transactions=debug", "info,transactions=debug", "info,transactions=loud"},
                          Case{"spdlog", "debug", "debug", "loud"}}) {
        DYNAMIC_SECTION(c.logger) {
            fieldlog_test::TempDir dir;
            const std::string log_path = dir.file("service.log");
            write_file(dir.file("fieldlog.toml"), file_config(log_path));
            ServiceProcess service(dir, {"--logger=" + c.logger, "--config=" + dir.file("fieldlog.toml"),
                                         "--log-file=" + log_path});
            {
                httplib::Client client = make_client(service.port());
                const auto post = [&](const std::string& id) {
                    const httplib::Result res = client.Post("/transactions", {{"X-Request-ID", id}},
                                                            R"({"account":"a","amount":1,"currency":"EUR","merchant":"m"})",
                                                            "application/json");
                    REQUIRE(res);
                    CHECK(res->status == 202);
                };
                const httplib::Result before = client.Get("/loglevel");
                REQUIRE(before);
                CHECK(before->status == 200);
                CHECK(before->body == "info\n");
                post("at-info");

                const httplib::Result raise = client.Put("/loglevel", c.raise, "text/plain");
                REQUIRE(raise);
                CHECK(raise->status == 200);
                CHECK(raise->body == c.raised + "\n");
                post("at-debug");

                const httplib::Result bad = client.Put("/loglevel", c.rejected, "text/plain");
                REQUIRE(bad);
                CHECK(bad->status == 400);
                const bool names_the_value = bad->body.find("loud") != std::string::npos;
                CHECK((names_the_value || c.logger == "spdlog"));  // spdlog's message names no value
                const httplib::Result after = client.Get("/loglevel");
                REQUIRE(after);
                CHECK(after->body == c.raised + "\n");  // unchanged by the bad request
            }
            service.terminate();
            std::vector<std::string> parsed_for;  // the request ids of the "transaction parsed" records
            for (const Record& r : read_records(log_path)) {
                if (r.get("msg") == "transaction parsed") parsed_for.push_back(r.get("request_id"));
            }
            CHECK(parsed_for == std::vector<std::string>{"at-debug"});
        }
    }
}

TEST_CASE("One request with X-Debug: 1 logs at debug while a thousand others stay at info, the counts exact",
          "[http_service][scope_level]") {
    constexpr int kRequests = 1001;
    constexpr int kDebugRequest = 500;
    fieldlog_test::TempDir dir;
    const std::string log_path = dir.file("service.log");
    write_file(dir.file("fieldlog.toml"), file_config(log_path));
    ServiceProcess service(dir, {"--config=" + dir.file("fieldlog.toml")});
    {
        httplib::Client client = make_client(service.port());
        for (int i = 0; i < kRequests; ++i) {
            httplib::Headers headers{{"X-Request-ID", "r-" + std::to_string(i)}};
            if (i == kDebugRequest) headers.emplace("X-Debug", "1");
            const httplib::Result res = client.Post("/transactions", headers,
                                                    R"({"account":"a","amount":1,"currency":"EUR","merchant":"m"})",
                                                    "application/json");
            REQUIRE(res);
            CHECK(res->status == 202);
        }
    }
    service.terminate();
    std::map<std::string, int> per_message;
    std::vector<std::string> debug_for;  // the request ids of the debug records
    for (const Record& r : read_records(log_path)) {
        if (r.get("level") == "debug") debug_for.push_back(r.get("request_id"));
        ++per_message[r.get("msg")];
    }
    CHECK(per_message["transaction accepted"] == kRequests);
    CHECK(per_message["request done"] == kRequests);
    CHECK(per_message["transaction parsed"] == 1);
    CHECK(debug_for == std::vector<std::string>{"r-" + std::to_string(kDebugRequest)});
}

TEST_CASE("The middleware continues the caller's traceparent, or starts a trace without one, and answers with its "
          "own span",
          "[http_service][trace]") {
    fieldlog_test::TempDir dir;
    const std::string log_path = dir.file("service.log");
    write_file(dir.file("fieldlog.toml"), file_config(log_path));
    ServiceProcess service(dir, {"--config=" + dir.file("fieldlog.toml")});
    const std::string caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    std::map<std::string, std::string> answered;  // request id → the traceparent of the reply
    {
        httplib::Client client = make_client(service.port());
        const auto post = [&](const std::string& id, httplib::Headers headers) {
            headers.emplace("X-Request-ID", id);
            const httplib::Result res = client.Post("/transactions", headers,
                                                    R"({"account":"a","amount":1,"currency":"EUR","merchant":"m"})",
                                                    "application/json");
            REQUIRE(res);
            CHECK(res->status == 202);
            answered[id] = res->get_header_value("traceparent");
        };
        post("with-trace", {{"traceparent", caller}, {"tracestate", "congo=t61rcWkgMzE"}});
        post("without-trace", {});
        post("invalid-trace", {{"traceparent", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}});
    }
    service.terminate();

    const auto from_caller = fieldlog::TraceContext::parse(caller);
    REQUIRE(from_caller);
    std::map<std::string, fieldlog::TraceContext> ours;
    for (const auto& [id, traceparent] : answered) {
        INFO(id << ": " << traceparent);
        const auto context = fieldlog::TraceContext::parse(traceparent);
        REQUIRE(context);
        CHECK(context->span_id() != from_caller->span_id());
        CHECK((context->trace_id() == from_caller->trace_id()) == (id == "with-trace"));
        CHECK(context->is_sampled() == (id == "with-trace"));  // a new trace starts unsampled
        ours.emplace(id, *context);
    }
    // Every record of a request, the settlement on the worker pool included, carries the span
    // the reply named.
    std::map<std::string, int> records_of;
    for (const Record& r : read_records(log_path)) {
        const std::string id = r.get("request_id");
        if (id.empty()) continue;
        INFO(id << ": " << r.get("msg"));
        const auto it = ours.find(id);
        REQUIRE(it != ours.end());
        CHECK(r.get("trace_id") == it->second.trace_id_hex().view());
        CHECK(r.get("span_id") == it->second.span_id_hex().view());
        CHECK(r.get("trace_flags") == it->second.flags_hex().view());
        ++records_of[id];
    }
    CHECK(records_of == std::map<std::string, int>{{"invalid-trace", 3}, {"with-trace", 3}, {"without-trace", 3}});
}
