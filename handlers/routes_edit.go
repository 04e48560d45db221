package handlers

// editRoutes are the routes of editing one key (issue 22): creating a key
// from the database page; every edit itself is an action (POST /actions/preview).
func (a *App) editRoutes() []Route {
	return nil
}
