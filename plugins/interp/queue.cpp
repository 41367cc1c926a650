// Queues and events of the interpreter: every command runs to completion before its call
// returns, so a queue is trivially in order and an event is complete when it is created. They
// are plugins/common/sync_queue.hpp's, instantiated here with the plugin's names.
#include "interp_plugin.hpp"

template struct plx_support::SyncQueue<plx_interp::Plugin>;
