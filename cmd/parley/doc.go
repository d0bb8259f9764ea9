// Command parley is the Parley server and its command-line tools.
//
// Usage:
//
//	parley serve                 run the server
//	parley validate FILE...      check agent configs
//	parley chat --config FILE    talk to a bot in the terminal
//	parley test PATH...          run the bots' conversation tests
//	parley apply DIR             create or update tenants and bots from a directory
//	parley tenant create SLUG    create a tenant and print its first admin key
//	parley user ...              manage users and members; a new admin key when all are lost
//	parley migrate               bring the database schema up to date
package main
