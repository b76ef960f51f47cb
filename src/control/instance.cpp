// SPDX-License-Identifier: MIT
// The second-copy check (see instance.hpp). The name carries the pid and the pid namespace's
// inode, so processes in other namespaces never collide; the socket is close-on-exec, so a
// program exec'd in this process (same pid) starts with the name free.
#include "control/instance.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>

namespace fieldlog::detail {

void announce_instance() noexcept {
    struct stat pid_namespace {};
    if (::stat("/proc/self/ns/pid", &pid_namespace) != 0) pid_namespace.st_ino = 0;
    const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return;
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    // sun_path[0] == '\0': the abstract namespace, no file in the file system.
    const int length = std::snprintf(address.sun_path + 1, sizeof address.sun_path - 1, "fieldlog-state-%lu-%ld",
                                     static_cast<unsigned long>(pid_namespace.st_ino), static_cast<long>(::getpid()));
    const auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + static_cast<std::size_t>(length));
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), size) == 0) return;  // ours until exit: fd kept
    const int error = errno;
    ::close(fd);
    if (error == EADDRINUSE) {
        std::fprintf(stderr,
                     "fieldlog: a second copy of the library started in this process (pid %ld); this module's "
                     "records follow its own configuration, not the program's. Link the shared libfieldlog when "
                     "more than one module logs.\n",
                     static_cast<long>(::getpid()));
    }
}

}  // namespace fieldlog::detail
