// The UDP sink: one record per datagram (without its '\n') from a non-blocking socket.
#include "fieldlog/sinks/udp_sink.hpp"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>

namespace fieldlog {

struct UdpSink::State {
    int fd = -1;
    sockaddr_storage address{};
    socklen_t address_length = 0;
};

UdpSink::UdpSink(UdpSinkOptions options) : state_(std::make_unique<State>()) {
    const std::string& address = options.address;
    const std::size_t colon = address.rfind(':');
    if (colon == std::string::npos) throw std::invalid_argument("address '" + address + "' has no :port");
    std::string host = address.substr(0, colon);
    const std::string port = address.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo* found = nullptr;
    if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
        throw std::invalid_argument("cannot resolve '" + address + "': " + ::gai_strerror(rc));
    }
    state_->fd = ::socket(found->ai_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    std::memcpy(&state_->address, found->ai_addr, found->ai_addrlen);
    state_->address_length = found->ai_addrlen;
    ::freeaddrinfo(found);
    if (state_->fd < 0) throw std::system_error(errno, std::generic_category(), "socket");
}

UdpSink::~UdpSink() {
    if (state_->fd >= 0) ::close(state_->fd);
}

void UdpSink::write(std::span<const char> record) {
    std::size_t size = record.size();
    if (size > 0 && record[size - 1] == '\n') --size;
    const ssize_t n = ::sendto(state_->fd, record.data(), size, MSG_DONTWAIT | MSG_NOSIGNAL,
                               reinterpret_cast<const sockaddr*>(&state_->address), state_->address_length);
    if (n < 0) {
        count_dropped();
    } else {
        count_written(1, size);
    }
}

void UdpSink::write_record(const RecordView& record) { write(record.bytes); }

void UdpSink::write_batch(std::span<const RecordView> records) {
    for (const RecordView& r : records) write(r.bytes);
}

}  // namespace fieldlog
