// The public dlrt C++ API in one include.
#pragma once

#include "dlrt/dtype.h"
#include "dlrt/export.h"
#include "dlrt/session.h"
#include "dlrt/shape.h"
#include "dlrt/status.h"
#include "dlrt/tensor.h"
