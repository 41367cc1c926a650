// Everything a plexus application needs: the kernel language, buffers, the runtime.
#pragma once

#include "plexus/async_copy.hpp"
#include "plexus/buffer.hpp"
#include "plexus/error.hpp"
#include "plexus/kernel.hpp"
#include "plexus/launch.hpp"
#include "plexus/matrix.hpp"
#include "plexus/runtime.hpp"
#include "plexus/subgroup.hpp"
