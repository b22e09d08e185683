import { mount } from 'svelte';

import './app.css';
import Root from './Root.svelte';

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element');

export default mount(Root, { target });
