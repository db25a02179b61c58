package cut

// The tests call hasFailure without a Cutter.
func init() { tables.Do(fillTables) }
