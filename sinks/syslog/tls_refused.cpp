// SPDX-License-Identifier: MIT
// The syslog sink's TLS in a build without GnuTLS (FIELDLOG_WITH_TLS=OFF): the transports tls
// and relp-tls are refused when the sink is made, so configure() names the sink and the way to
// a build that has them, instead of sending in the clear.
#include "tls_stream.hpp"

#include <stdexcept>

namespace fieldlog::detail {

std::unique_ptr<TlsCredentials> load_tls_credentials(const TlsSettings&) {
    throw std::invalid_argument(
        "this build of fieldlog has no TLS: rebuild with -DFIELDLOG_WITH_TLS=ON (needs GnuTLS: libgnutls28-dev)");
}

}  // namespace fieldlog::detail
