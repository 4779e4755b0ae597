// File loading for the workload readers' tests (SimAI, AICB, Chakra): the repository's example
// files found from any working directory, a file's whole text, a text as a spreadsheet saves it,
// and two workloads compared op by op.
#pragma once

#include <string>

#include "workload/workload.h"

namespace nshim::workload {

// `relative` (to the repository) as found from the working directory or from this source tree.
std::string examplePath(const std::string& relative);

// The whole file, bytes as they are; fails the test when it cannot be read.
std::string readWholeFile(const std::string& path);

// `text` as a spreadsheet tool saves it: a UTF-8 byte order mark, then CRLF line ends.
std::string asSpreadsheetSaves(const std::string& text);

// Same world, communicators, and every op of every rank field by field.
void requireSameWorkload(const Workload& a, const Workload& b);

}  // namespace nshim::workload
