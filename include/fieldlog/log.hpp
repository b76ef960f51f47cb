// SPDX-License-Identifier: MIT
// The call-site header: what a file that only logs needs (levels, fields, loggers, scopes,
// backtraces, the FIELDLOG_* macros and their rate-limited forms), with fmt's core header and no
// configuration, encoder or sink. It keeps such files as cheap to compile as the logging itself
// allows (docs/compile-cost.md). fieldlog.hpp is the all-in-one for the file that configures.
#pragma once

#include "fieldlog/backtrace.hpp"
#include "fieldlog/field.hpp"
#include "fieldlog/level.hpp"
#include "fieldlog/logger.hpp"
#include "fieldlog/rate_limit.hpp"
#include "fieldlog/scope.hpp"
