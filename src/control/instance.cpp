// SPDX-License-Identifier: MIT
// The second-copy check (see instance.hpp). Either way the claim is close-on-exec, so a program
// exec'd in this process (same pid) starts with it free, and the kernel drops it when the
// process ends.
//  - Linux: an abstract socket name that carries the pid and the pid namespace's inode, so
//    processes in other namespaces never collide.
//  - Elsewhere: an flock(2) on a file named for the user and the pid in the temporary
//    directory. Locks belong to the open file, so a second copy's own open finds it held. The
//    file is removed at exit; one left by a crash is taken anew by a later process of that pid.
#include "control/instance.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>

#include "base/platform.hpp"

#if FIELDLOG_LINUX_FACILITIES
#include <sys/socket.h>
#include <sys/un.h>
#else
#include <fcntl.h>
#include <sys/file.h>

#include <cstdlib>
#include <cstring>
#endif

namespace fieldlog::detail {
namespace {

void say_second_copy() noexcept {
    std::fprintf(stderr,
                 "fieldlog: a second copy of the library started in this process (pid %ld); this module's "
                 "records follow its own configuration, not the program's. Link the shared libfieldlog when "
                 "more than one module logs.\n",
                 static_cast<long>(::getpid()));
}

}  // namespace

#if FIELDLOG_LINUX_FACILITIES

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
    if (error == EADDRINUSE) say_second_copy();
}

#else

namespace {

char g_claim[1024];  // the claimed file's path, removed at exit
pid_t g_claimed_by = 0;  // by this process, not by a forked child that exits

void remove_claim() {
    if (::getpid() == g_claimed_by) ::unlink(g_claim);
}

}  // namespace

void announce_instance() noexcept {
    const char* directory = std::getenv("TMPDIR");
    if (directory == nullptr || *directory == '\0') directory = "/tmp";
    char path[sizeof g_claim];
    const int length = std::snprintf(path, sizeof path, "%s/fieldlog-state-%lu-%ld", directory,
                                     static_cast<unsigned long>(::getuid()), static_cast<long>(::getpid()));
    if (length < 0 || static_cast<std::size_t>(length) >= sizeof path) return;
    const int fd = ::open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {  // ours until exit: fd kept
        std::memcpy(g_claim, path, sizeof path);
        g_claimed_by = ::getpid();
        std::atexit(remove_claim);
        return;
    }
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK) say_second_copy();
}

#endif

}  // namespace fieldlog::detail
