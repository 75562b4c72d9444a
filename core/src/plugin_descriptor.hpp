#pragma once

#include <string>

#include "cocktail/plugin_abi.h"

namespace cocktail {

// Why a plugin's descriptor cannot be used, or empty when it can. Reads the ABI major first
// and nothing past the fields that `struct_size` covers; never follows the function pointers.
std::string descriptor_problem(const cocktail_plugin_descriptor* descriptor);

}  // namespace cocktail
