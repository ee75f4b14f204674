package drovertype

// Migration is one numbered schema change of a store: what a driver
// embeds (droverdriver.Driver.Migrations) and what drover.Migrate reports
// it applied.
type Migration struct {
	Version int
	Name    string
	SQL     string
	// Down undoes SQL (NNN_name.down.sql), for users who run migrations
	// with their own tool; empty when the migration has none. Drover
	// itself never migrates down.
	Down string
}
