// Package builtin holds the native Go tools a config enables by name, such as
// current_time, handoff_to_human, end_dialog, remember and recall.
package builtin
