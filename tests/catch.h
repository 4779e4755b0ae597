// Includes Catch2, v3 (GPU machine) or v2 (Debian 12), with one spelling for the tests.
#pragma once
#if __has_include(<catch2/catch_test_macros.hpp>)
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#define NSHIM_CATCH3 1
#else
#include <catch2/catch.hpp>
#endif
