package handlers

// bulkRoutes are the routes of bulk actions on a family's or a pattern's
// keys (issue 22): the counting preview, the job's page, cancel, resume, undo.
func (a *App) bulkRoutes() []Route {
	return nil
}
