// SPDX-License-Identifier: MIT
// A receiver on 127.0.0.1 for the network sinks' tests, in one of the ways a real one behaves:
// an OTLP/HTTP endpoint that answers every request, or reads them and never answers; a syslog
// TCP receiver that reads octet-counted frames as they come, or takes the connection with a
// small receive buffer and reads nothing until told; a UDP receiver. It counts the records it
// took whole (a request it answered, a complete frame, a datagram) that hold a marker text.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace fieldlog_test {

class LoopbackReceiver {
public:
    enum class Kind {
        http_answering,  ///< answers each request 200 with an empty body, keeps the connection
        http_silent,     ///< reads each request, never answers
        frames,          ///< RFC 6587 octet-counted frames, read as they arrive
        frames_unread,   ///< frames, left in a small receive buffer until read_rest()
        datagrams,       ///< UDP
    };

    /// Throws std::system_error when the socket cannot be made.
    LoopbackReceiver(Kind kind, std::string marker);
    ~LoopbackReceiver();
    LoopbackReceiver(const LoopbackReceiver&) = delete;
    LoopbackReceiver& operator=(const LoopbackReceiver&) = delete;

    /// "127.0.0.1:<port>".
    [[nodiscard]] std::string address() const;
    /// Records taken whole so far: marker occurrences in answered requests, complete frames and
    /// datagrams holding it.
    [[nodiscard]] std::size_t records();
    /// Whether a request this receiver answered held `text` (http_answering).
    [[nodiscard]] bool answered_with(std::string_view text);
    /// Frames and datagrams: reads what the sockets hold now (their sender gone), counting it.
    void read_rest();

private:
    struct Connection {
        int fd;
        std::string pending;
        bool ended = false;  ///< the sender closed it: read no more
    };

    void serve();
    void accept_one();
    /// Reads one datagram; false when none is waiting.
    bool read_datagram();
    /// Reads what `connection` has; false when it ended.
    bool read_from(Connection& connection);
    void take(Connection& connection);
    std::size_t occurrences(std::string_view text) const;

    const Kind kind_;
    const std::string marker_;
    int fd_ = -1;
    int port_ = 0;
    std::mutex mutex_;
    std::vector<Connection> connections_;
    std::size_t records_ = 0;
    std::string answered_;  ///< the bodies of the requests answered, back to back
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

/// A loopback port nothing listens on for `type` (SOCK_STREAM, SOCK_DGRAM), below the kernel's
/// ephemeral range so that no later socket is given it: bound for a moment, then let go.
int unused_port(int type);

}  // namespace fieldlog_test
