// SPDX-License-Identifier: MIT
#pragma once

namespace crash_site {

/// Faults on `page` with the frame pointer its caller saved overwritten.
void enter_smashed(int* page);

}  // namespace crash_site
