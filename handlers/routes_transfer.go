package handlers

// transferRoutes are the routes of export (JSON Lines) and import (issue 22).
func (a *App) transferRoutes() []Route {
	return nil
}
