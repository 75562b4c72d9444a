#pragma once

namespace cocktail::vulkan {

// Opens the Vulkan loader (libvulkan) and points volk at it, once per process. The plugin links
// no Vulkan library, so it loads on a machine without one and reports why it cannot run.
//
// The file is COCKTAIL_VULKAN_LOADER when that is set and not empty (a loader shipped beside a
// build, or a file that is not there, which is how a test hides the loader), else
// libvulkan.so.1 wherever the dynamic linker finds it. It is never closed: the drivers it
// loads may keep threads and exit handlers that run inside it. Throws Error naming the file
// and the dynamic linker's reason, every time it is called after a failure.
void open_loader();

}  // namespace cocktail::vulkan
